/* Job page: the text panel (regions, lines, tables), the legend, the low-confidence
   threshold, correction marks and the reading-order overlay. */
"use strict";

(() => {
  const ui = window.OCRJob;
  const { cfg, state, el } = ui;

  function buildPanel(page) {
    const regionIndex = new Map(page.regions.map((r, k) => [r.id, k]));
    const tables = new Map(page.tables.map((t) => [t.region_id, t]));
    const byRegion = new Map();
    page.lines.forEach((line, i) => {
      const key = regionIndex.has(line.region_id) ? line.region_id : "";
      if (!byRegion.has(key)) byRegion.set(key, []);
      byRegion.get(key).push(i);
    });
    const sections = page.regions
      .map((region, k) => ({ region, k }))
      .sort((a, b) => a.region.order - b.region.order);
    if (byRegion.has("")) sections.push({ region: null, k: -1 });

    const frag = document.createDocumentFragment();
    state.items = new Array(page.lines.length);
    state.readingOrder = [];
    for (const { region, k } of sections) {
      const indices = (byRegion.get(region ? region.id : "") || [])
        .sort((a, b) => page.lines[a].order - page.lines[b].order);
      const section = document.createElement("section");
      section.className = "rgn";
      const type = region && ui.TYPES.has(region.type) ? region.type : "other";
      section.classList.add(`t-${type}`);
      if (region) section.dataset.r = k;
      const head = document.createElement("h3");
      head.className = "rgn-head";
      head.innerHTML = '<span class="swatch" aria-hidden="true"></span><span class="rgn-order"></span><span class="rgn-type"></span>';
      head.querySelector(".rgn-order").textContent = region ? region.order : "";
      head.querySelector(".rgn-type").textContent = region ? ui.typeLabel(type) : "Other lines";
      if (region && region.label && region.label !== region.type) head.title = `Layout label: ${region.label}`;
      section.append(head);

      const table = region && tables.get(region.id);
      let holder = section;
      if (table) {
        section.append(renderTable(table));
        const details = document.createElement("details");
        details.className = "table-lines";
        details.innerHTML = `<summary>Lines of this table (${indices.length})</summary>`;
        section.append(details);
        holder = details;
      } else if (!indices.length) {
        const empty = document.createElement("p");
        empty.className = "muted small rgn-empty";
        empty.textContent = "No text in this region.";
        section.append(empty);
      }
      if (indices.length) {
        const ol = document.createElement("ol");
        ol.className = "lines";
        for (const i of indices) {
          const line = page.lines[i];
          const li = document.createElement("li");
          li.className = `ln src-${line.source === "pdf" ? "pdf" : "ocr"}`;
          li.title = line.source === "pdf" ? "From the PDF's text layer" : "Read by OCR";
          li.dataset.i = i;
          li.id = `ln-${i}`;
          li.innerHTML = '<span class="no"></span><span class="tx"></span><span class="cf"></span>';
          li.firstChild.textContent = line.order;
          li.children[1].textContent = line.text;
          li.children[2].textContent = line.confidence.toFixed(2);
          ol.append(li);
          state.items[i] = li;
          state.readingOrder.push(i);
        }
        holder.append(ol);
      }
      frag.append(section);
    }
    el.panel.textContent = "";
    el.panel.append(frag);
    el.panel.scrollTop = 0;
    const mean = state.data.mean_confidence;
    el.stats.textContent = `${page.lines.length} lines · ${page.regions.length} regions` +
      (mean !== null && page.lines.length ? ` · mean confidence ${mean.toFixed(2)}` : "");
    el.stats.prepend(textSourceBadge(page));
  }

  /* Where the page's text came from: its PDF text layer, OCR, or both. */
  function textSourceBadge(page) {
    const badge = document.createElement("span");
    const source = page.text_source || "ocr";
    badge.className = `badge text-source text-source-${source}`;
    badge.dataset.role = "text-source";
    badge.textContent = { pdf: "Text layer", mixed: "Text layer + OCR", ocr: "OCR" }[source] || "OCR";
    badge.title = page.text_layer_rejected ? `Text layer not used: ${page.text_layer_rejected}` : "";
    return badge;
  }

  /* A table from its cells (never from markup): text goes in with textContent. */
  function renderTable(table) {
    const wrap = document.createElement("div");
    wrap.className = "ocr-table-wrap";
    const element = document.createElement("table");
    element.className = "ocr-table";
    const rows = Array.from({ length: table.n_rows }, () => document.createElement("tr"));
    const cells = [...table.cells].sort((a, b) => a.row - b.row || a.col - b.col);
    for (const cell of cells) {
      const td = document.createElement(cell.row === 0 ? "th" : "td");
      td.textContent = cell.text;
      if (cell.row_span > 1) td.rowSpan = cell.row_span;
      if (cell.col_span > 1) td.colSpan = cell.col_span;
      if (rows[cell.row]) rows[cell.row].append(td);
    }
    element.append(...rows);
    wrap.append(element);
    return wrap;
  }

  function buildLegend(page) {
    const counts = new Map();
    for (const region of page.regions) {
      const type = ui.TYPES.has(region.type) ? region.type : "other";
      counts.set(type, (counts.get(type) || 0) + 1);
    }
    el.legend.textContent = "";
    if (!counts.size) return;
    const title = document.createElement("span");
    title.className = "legend-title";
    title.textContent = "Regions:";
    el.legend.append(title);
    for (const type of cfg.regionTypes.filter((t) => counts.has(t))) {
      const label = document.createElement("label");
      label.className = `legend-item t-${type}`;
      label.innerHTML = `<input type="checkbox" checked data-type="${type}"><span class="swatch" aria-hidden="true"></span>`;
      label.append(`${ui.typeLabel(type)} (${counts.get(type)})`);
      el.legend.append(label);
    }
  }

  el.legend.addEventListener("change", (event) => {
    const type = event.target.dataset.type;
    if (!type) return;
    el.overlay.querySelectorAll(`.rg.t-${type}`).forEach((shape) => {
      shape.style.display = event.target.checked ? "" : "none";
    });
  });

  /* ---------- low confidence, corrections, reading order ---------- */

  function applyThreshold() {
    const t = state.threshold;
    el.threshold.value = t;
    el.thresholdValue.textContent = t.toFixed(2);
    if (!state.data) return;
    let low = 0;
    state.data.normalized.lines.forEach((line, i) => {
      const isLow = line.confidence < t;
      low += isLow;
      state.polys[i].classList.toggle("low", isLow);
      state.items[i].classList.toggle("low", isLow);
    });
    el.lowCount.textContent = `${low} line${low === 1 ? "" : "s"} below`;
    el.lowCount.classList.toggle("is-zero", low === 0);
  }

  el.threshold.addEventListener("input", () => {
    state.threshold = Number(el.threshold.value);
    localStorage.setItem("ocr.threshold", state.threshold);
    applyThreshold();
  });

  function markCorrected(i) {
    const line = state.data.normalized.lines[i];
    const corrected = line.original_text !== null && line.original_text !== undefined;
    const li = state.items[i];
    state.polys[i].classList.toggle("fix", corrected);
    li.classList.toggle("fix", corrected);
    li.children[1].textContent = line.text;
    const who = state.data.corrections[line.id];
    li.title = corrected
      ? `Corrected${who && who.by ? ` by ${who.by}` : ""}. The engine read: “${line.original_text}” (confidence ${line.confidence.toFixed(2)})`
      : `Confidence ${line.confidence.toFixed(2)}`;
  }

  function drawOrder() {
    const page = state.data.normalized;
    const size = Math.max(page.width, page.height);
    const r = Math.max(9, size * 0.0075);
    const parts = [];
    page.regions.forEach((region) => {
      const [x, y] = region.bbox;
      parts.push(`<g class="ord-r"><circle cx="${ui.num(x)}" cy="${ui.num(y)}" r="${ui.num(r)}"/>` +
        `<text x="${ui.num(x)}" y="${ui.num(y)}" font-size="${ui.num(r * 1.15)}">${Number(region.order)}</text></g>`);
    });
    page.lines.forEach((line) => {
      const [x0, y0, , y1] = line.bbox;
      const h = Math.max(6, (y1 - y0) * 0.62);
      parts.push(`<text class="ord-l" x="${ui.num(x0 - h * 0.3)}" y="${ui.num((y0 + y1) / 2)}" font-size="${ui.num(h)}">${Number(line.order)}</text>`);
    });
    el.overlay.querySelector("g.order").innerHTML = parts.join("");
  }

  el.showOrder.addEventListener("change", () => {
    el.overlay.classList.toggle("show-order", el.showOrder.checked);
    if (el.showOrder.checked && state.data) drawOrder();
  });
  el.showLines.addEventListener("change", () => el.overlay.classList.toggle("no-lines", !el.showLines.checked));
  el.showRegions.addEventListener("change", () => el.overlay.classList.toggle("no-regions", !el.showRegions.checked));

  Object.assign(ui, { buildPanel, buildLegend, applyThreshold, markCorrected, drawOrder });
})();
