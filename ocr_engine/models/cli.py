"""``python -m ocr_engine models build|verify|list``."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from . import manifest
from .pack import BY_DIR, MODEL_DIRS, build_pack, pack_status, verify_pack
from .table import BuildToolMissing


def _parser() -> argparse.ArgumentParser:
    default_dir = Path(os.environ.get("OCR_MODELS_DIR") or "models")
    p = argparse.ArgumentParser(prog="python -m ocr_engine models",
                                description="Build and check the offline model pack.")
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build missing, corrupt or outdated model folders")
    b.add_argument("--out", type=Path, default=default_dir, help="pack folder (default: $OCR_MODELS_DIR or models)")
    b.add_argument("--force", action="store_true", help="rebuild even folders that verify")
    b.add_argument("--model", action="append", choices=MODEL_DIRS, help="only this folder (repeatable)")
    v = sub.add_parser("verify", help="check every file against manifest.json; exit 1 on any problem")
    v.add_argument("--dir", type=Path, default=default_dir, help="pack folder (default: $OCR_MODELS_DIR or models)")
    v.add_argument("--model", action="append", choices=MODEL_DIRS, help="only this folder (repeatable)")
    ls = sub.add_parser("list", help="show each model folder, its state and its sources")
    ls.add_argument("--dir", type=Path, default=default_dir, help="pack folder (default: $OCR_MODELS_DIR or models)")
    ls.add_argument("--json", action="store_true")
    return p


def _report(problems: list[str]) -> int:
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    return 1 if problems else 0


def _build(args) -> int:
    started = time.monotonic()
    try:
        result = build_pack(args.out, names=args.model, force=args.force, log=lambda msg: print(msg, file=sys.stderr))
    except BuildToolMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    built = sum(v == "built" for v in result.values())
    print(f"{args.out}: {built} built, {len(result) - built} up to date ({time.monotonic() - started:.1f} s)")
    return _report(verify_pack(args.out, names=args.model))


def _verify(args) -> int:
    problems = verify_pack(args.dir, names=args.model)
    if not problems:
        print(f"{args.dir}: ok")
    return _report(problems)


def _list(args) -> int:
    entries = manifest.load(args.dir)["models"] if args.dir.is_dir() else {}
    rows = [{"dir": name, "model_name": BY_DIR[name].model_name, "status": state,
             "optional": BY_DIR[name].optional, "sources": entries.get(name, {}).get("sources", {})}
            for name, state in pack_status(args.dir).items()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for r in rows:
        sources = ", ".join(f"{k} {v}" for k, v in r["sources"].items())
        print(f"{r['dir']:<32} {r['status']:<9} {'(optional) ' if r['optional'] else ''}{sources}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return {"build": _build, "verify": _verify, "list": _list}[args.command](args)
