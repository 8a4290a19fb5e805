/* Job page: retyping a line, in the panel or over the image (Enter saves, Esc cancels). */
"use strict";

(() => {
  const ui = window.OCRJob;
  const { state, el } = ui;

  function makeEditor(i, className) {
    closeEditor(false);
    const input = document.createElement("input");
    input.type = "text";
    input.className = className;
    input.value = state.data.normalized.lines[i].text;
    input.setAttribute("aria-label", `Text of line ${state.data.normalized.lines[i].order}`);
    input.spellcheck = true;
    state.editor = { i, input, page: state.current };
    input.addEventListener("keydown", (event) => {
      event.stopPropagation();
      if (event.key === "Enter") { event.preventDefault(); closeEditor(true); }
      if (event.key === "Escape") { event.preventDefault(); closeEditor(false); }
    });
    input.addEventListener("blur", () => { if (state.editor && state.editor.input === input) closeEditor(true); });
    return input;
  }

  function editInPanel(i) {
    ui.setSelected(i, "panel");
    const input = makeEditor(i, "line-edit in-panel");
    const text = state.items[i].children[1];
    text.hidden = true;
    text.after(input);
    input.focus();
    input.select();
  }

  function editOnImage(i) {
    ui.setSelected(i, "image");
    const input = makeEditor(i, "line-edit on-image");
    el.stage.append(input);
    positionEditor();
    input.focus();
    input.select();
  }

  function positionEditor() {
    const { i, input } = state.editor;
    if (!input.classList.contains("on-image")) return;
    const [x0, y0, x1, y1] = state.data.normalized.lines[i].bbox;
    const z = state.zoom;
    const height = Math.max(28, (y1 - y0) * z + 10);
    input.style.left = `${x0 * z - 5}px`;
    input.style.top = `${y0 * z - 5}px`;
    input.style.width = `${Math.max(260, (x1 - x0) * z + 10)}px`;
    input.style.height = `${height}px`;
    input.style.fontSize = `${Math.min(22, Math.max(13, height * 0.55))}px`;
  }

  async function closeEditor(save) {
    const editor = state.editor;
    if (!editor) return;
    state.editor = null;
    const { i, input } = editor;
    const line = state.data && editor.page === state.current ? state.data.normalized.lines[i] : null;
    const text = input.value;
    input.remove();
    if (state.items[i] && line) state.items[i].children[1].hidden = false;
    if (!save || !line || text === line.text) return;
    const url = OCR.expand(state.data.links.line, { line_id: line.id });
    const response = await OCR.request("PATCH", url, { text });
    if (!response.ok) {
      ui.toast(response.body && response.body.detail ? response.body.detail : "The correction was not saved.", true);
      return;
    }
    if (editor.page !== state.current || !state.data) return;
    // The answer is every edit's (docs/review.md, "What an edit answers"): the corrected page and
    // its `line`, whichever store the retype went to. A retype moves nothing, so the line is
    // updated in place: no redraw, the reviewer's place on the page stays. It is looked up by id in
    // the page shown now: a live event may have redrawn the page while the request was out, from a
    // read made before this edit committed.
    const edited = response.body.line;
    const shown = state.data.normalized.lines.findIndex((l) => l.id === edited.id);
    if (shown < 0) return;
    Object.assign(state.data.normalized.lines[shown], { text: edited.text, original_text: edited.original_text });
    state.data.corrections = response.body.corrections;
    ui.markCorrected(shown);
    ui.toast(edited.original_text === null ? "Restored the engine's text." : "Correction saved.");
  }

  Object.assign(ui, { editInPanel, editOnImage, positionEditor, closeEditor });
})();
