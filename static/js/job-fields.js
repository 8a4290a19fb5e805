/* Job page: the fields panel (docs/extraction.md). The job's document type (and how it was decided),
   changeable (PUT …/document-type: its fields are read again, and the change teaches the classifier);
   each value with its confidence and grounding; a click shows its lines on the page (polygons and
   panel lines get .fld); a reviewer corrects a value or points it at the selected line
   (PATCH …/fields/{name}, stored with who and when). Values inside an array are named by their path:
   line_items.0.amount.

   The answer is GET /api/v1/jobs/{id}/fields, read again after every change; while the stage is
   pending (after the job succeeded) it is read again with a growing pause. */
"use strict";

(() => {
  const ui = window.OCRJob;
  const { cfg, state } = ui;
  const links = cfg.fields;
  const $ = (id) => document.getElementById(id);
  const panel = $("fields-panel");
  if (!links || !panel) return;
  const fel = {
    status: $("fields-status"), type: $("document-type"), source: $("document-type-source"),
    error: $("fields-error"), list: $("fields-list"),
  };
  const SOURCES = { user: "named by a person", rules: "matched by its rules", model: "learned classifier", llm: "LLM" };
  const fields = { answer: null, byName: new Map(), mark: null, pollDelay: 1000, timer: null, types: 0 };

  /* ---------- reading and drawing ---------- */

  async function loadFields() {
    clearTimeout(fields.timer);
    const response = await OCR.request("GET", links.self);
    if (!response.ok) { panel.hidden = true; return; }
    fields.answer = response.body;
    render();
    const final = state.job.status === "succeeded" || state.job.status === "failed" || state.job.status === "canceled";
    if (response.body.status === "pending" && final) {
      fields.timer = setTimeout(loadFields, fields.pollDelay);
      fields.pollDelay = Math.min(fields.pollDelay * 2, 8000);
    } else fields.pollDelay = 1000;
  }

  const shown = (value) => (value === null || value === undefined ? "—" : String(value));

  function render() {
    const answer = fields.answer;
    // A user who has no document types reads no fields: no panel for them.
    panel.hidden = !answer.document_type && fields.types === 0;
    fel.status.textContent = answer.status;
    fel.status.dataset.status = answer.status;
    // The job's status colours: pending as a running job, skipped as a queued one.
    fel.status.className = `badge status-${{ pending: "running", skipped: "queued" }[answer.status] || answer.status}`;
    const kind = answer.document_type;
    // A type not in the list (another tab's new one): named by its name, which PUT takes as well as an id.
    if (kind && ![...fel.type.options].some((o) => o.textContent === kind.name)) addTypeOption(kind.name, kind.name);
    const chosen = kind ? [...fel.type.options].find((o) => o.textContent === kind.name) : fel.type.options[0];
    fel.type.value = chosen.value;
    fel.source.textContent = kind ? `${SOURCES[kind.source] || kind.source}` +
      (kind.confidence !== null && kind.confidence !== undefined ? ` · ${kind.confidence.toFixed(2)}` : "") : "";
    fel.error.hidden = !answer.error;
    fel.error.textContent = answer.error ? `${answer.error.code}: ${answer.error.detail}` : "";

    fields.byName = new Map();
    const frag = document.createDocumentFragment();
    for (const [name, value] of Object.entries(answer.fields || {})) {
      if (!Array.isArray(value)) { frag.append(fieldItem(name, name, value)); continue; }
      const group = document.createElement("li");
      group.className = "fld-array";
      const head = document.createElement("h3");
      head.textContent = `${name} (${value.length})`;
      const items = document.createElement("ol");
      value.forEach((item, k) => {
        const row = document.createElement("li");
        row.className = "fld-item";
        const inner = document.createElement("ul");
        for (const [key, one] of Object.entries(item)) inner.append(fieldItem(`${name}.${k}.${key}`, key, one));
        row.append(inner);
        items.append(row);
      });
      group.append(head, items);
      frag.append(group);
    }
    fel.list.textContent = "";
    if (!frag.childNodes.length) {
      const empty = document.createElement("li");
      empty.className = "muted small fld-empty";
      empty.textContent = { pending: "The fields are being read…", skipped: "No document type: no fields read.",
        failed: "The fields could not be read." }[answer.status] || "No fields.";
      fel.list.append(empty);
    }
    fel.list.append(frag);
    markFields();
  }

  function fieldItem(path, label, field) {
    fields.byName.set(path, field);
    const li = document.createElement("li");
    li.className = "fld";
    li.dataset.name = path;
    li.dataset.grounded = field.grounded ? "true" : "false";
    li.innerHTML =
      '<div class="fld-row"><button type="button" class="fld-name" title="Show its lines on the page"></button>' +
      '<span class="fld-value"></span><span class="fld-conf"></span><span class="badge fld-ground"></span></div>' +
      '<div class="fld-reason small" hidden></div>' +
      '<div class="fld-actions"><button type="button" class="btn btn-small" data-act="edit">Correct</button>' +
      '<button type="button" class="btn btn-small" data-act="cite">Cite selected line</button></div>';
    li.querySelector(".fld-name").textContent = label;
    const value = li.querySelector(".fld-value");
    value.textContent = shown(field.value);
    value.classList.toggle("muted", field.value === null);
    li.querySelector(".fld-conf").textContent = typeof field.confidence === "number" ? field.confidence.toFixed(2) : "";
    const ground = li.querySelector(".fld-ground");
    ground.textContent = field.grounded ? "grounded" : "not grounded";
    ground.classList.add(field.grounded ? "badge-ok" : "badge-warn");
    if (!field.grounded && field.reason) {
      const reason = li.querySelector(".fld-reason");
      reason.hidden = false;
      reason.textContent = field.reason;
    }
    const lines = (field.evidence || []).map((e) => `page ${e.page} ${e.line_id}`).join(", ");
    li.title = (lines ? `From ${lines}` : "No line cited") + (field.corrected
      ? `. Corrected${field.corrected.by ? ` by ${field.corrected.by}` : ""}, ${OCR.formatTime(field.corrected.at)}` : "");
    li.classList.toggle("corrected", Boolean(field.corrected));
    return li;
  }

  /* ---------- a field's lines on the page ---------- */

  // Called by drawPage (job.js) after every drawing of a page, and here after a click or a reload.
  function markFields() {
    const marked = document.querySelectorAll("#overlay polygon.ln.fld, #text-panel li.ln.fld");
    for (const shape of marked) shape.classList.remove("fld");
    for (const li of fel.list.querySelectorAll("li.fld.active")) li.classList.remove("active");
    const mark = fields.mark;
    if (!mark || !state.data) return;
    const active = fel.list.querySelector(`li.fld[data-name="${CSS.escape(mark.name)}"]`);
    if (active) active.classList.add("active");
    const field = fields.byName.get(mark.name);
    const ids = new Set((field ? field.evidence : []).filter((e) => e.page === state.shown).map((e) => e.line_id));
    let first = -1;
    state.data.normalized.lines.forEach((line, i) => {
      if (!ids.has(line.id)) return;
      state.polys[i].classList.add("fld");
      state.items[i].classList.add("fld");
      if (first < 0) first = i;
    });
    if (first >= 0 && mark.reveal) {
      mark.reveal = false;
      ui.revealOnImage(first);
      state.items[first].scrollIntoView({ block: "nearest" });
    }
  }

  function showLines(name) {
    const field = fields.byName.get(name);
    fields.mark = { name, reveal: true };
    const page = field && field.evidence && field.evidence.length ? field.evidence[0].page : null;
    if (page !== null && page !== state.current) {
      state.navigated = true;
      ui.loadPage(page); // its drawing marks the lines
    } else markFields();
    if (page === null) ui.toast(`${name}: no line cited.`);
  }

  /* ---------- corrections ---------- */

  async function change(method, url, body, message) {
    const response = await OCR.request(method, url, body);
    if (!response.ok) {
      const why = response.body && response.body.detail ? response.body.detail : "The change was not saved.";
      ui.toast(typeof why === "string" ? why : JSON.stringify(why), true);
      return false;
    }
    ui.toast(message);
    if (response.body && response.body.fields) { fields.answer = response.body; render(); } // the fields after it
    else await loadFields();
    return true;
  }

  // A number field keeps a number ("1.234,56" and "1,234.56" both read); an emptied value is null.
  function typed(text, before) {
    const trimmed = text.trim();
    if (!trimmed) return null;
    if (typeof before !== "number") return trimmed;
    const compact = trimmed.replace(/[\s']/g, "");
    const decimal = Math.max(compact.lastIndexOf(","), compact.lastIndexOf("."));
    const normal = decimal < 0 ? compact
      : compact.slice(0, decimal).replace(/[.,]/g, "") + "." + compact.slice(decimal + 1);
    const number = Number(normal);
    return Number.isFinite(number) ? number : trimmed;
  }

  function editValue(li) {
    const name = li.dataset.name;
    const field = fields.byName.get(name);
    const value = li.querySelector(".fld-value");
    const input = document.createElement("input");
    input.type = "text";
    input.className = "line-edit fld-edit";
    input.value = field.value === null || field.value === undefined ? "" : String(field.value);
    input.setAttribute("aria-label", `Value of ${name}`);
    let done = false;
    const finish = (save) => {
      if (done) return;
      done = true;
      input.remove();
      value.hidden = false;
      const next = typed(input.value, field.value);
      if (save && next !== field.value) {
        change("PATCH", OCR.expand(links.field, { name }), { value: next }, `${name} corrected.`);
      }
    };
    input.addEventListener("keydown", (event) => {
      event.stopPropagation();
      if (event.key === "Enter") { event.preventDefault(); finish(true); }
      if (event.key === "Escape") { event.preventDefault(); finish(false); }
    });
    input.addEventListener("blur", () => finish(true));
    value.hidden = true;
    value.after(input);
    input.focus();
    input.select();
  }

  function citeSelected(li) {
    const name = li.dataset.name;
    const line = state.selected >= 0 && state.data ? state.data.normalized.lines[state.selected] : null;
    if (!line) { ui.toast("Select the line on the page first (click it, or j/k), then cite it.", true); return; }
    const evidence = [{ page: state.shown, line_id: line.id, polygon: line.polygon }];
    fields.mark = { name, reveal: false };
    change("PATCH", OCR.expand(links.field, { name }), { evidence }, `${name} now cites ${line.id}.`);
  }

  fel.list.addEventListener("click", (event) => {
    const li = event.target.closest("li.fld");
    if (!li || event.target.closest("input")) return;
    const act = event.target.closest("[data-act]");
    if (act && act.dataset.act === "edit") editValue(li);
    else if (act && act.dataset.act === "cite") citeSelected(li);
    else showLines(li.dataset.name);
  });

  /* ---------- the document type ---------- */

  function addTypeOption(value, name) {
    const option = document.createElement("option");
    option.value = value;
    option.textContent = name;
    fel.type.append(option);
    return option;
  }

  async function loadTypes() {
    fel.type.disabled = !links.document_type;
    if (!links.document_types) return;
    const response = await OCR.request("GET", links.document_types);
    if (!response.ok) return;
    const types = Array.isArray(response.body) ? response.body : response.body.results || [];
    for (const kind of types) addTypeOption(String(kind.id), kind.name);
    fields.types = types.length;
  }

  fel.type.addEventListener("change", () => {
    const value = fel.type.value;
    if (!value) { render(); return; } // a job's type can be changed, not taken away
    fields.mark = null;
    change("PUT", links.document_type, { document_type: value },
      `Document type set to ${fel.type.selectedOptions[0].textContent}; its fields are read again.`)
      .then((saved) => { if (!saved) render(); }); // back to the type the job has
  });

  // Live: the job's end (or a fields event) reads the fields again.
  function onJobEvent(message) {
    if (message.event === "succeeded" || String(message.event).startsWith("fields")) loadFields();
  }

  Object.assign(ui, { markFields, onFieldsEvent: onJobEvent });
  loadTypes().then(loadFields);
})();
