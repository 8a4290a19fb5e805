/* Review queue (/review/): pages still to check across jobs; j/k move, Enter opens. */
"use strict";

(() => {
  const table = document.getElementById("queue");
  const body = table.querySelector("tbody");
  const order = document.getElementById("queue-order");
  let rows = [];
  let selected = 0;

  function select(i) {
    if (!rows.length) return;
    selected = Math.max(0, Math.min(rows.length - 1, i));
    body.querySelectorAll("tr").forEach((tr, k) => tr.classList.toggle("sel", k === selected));
    body.children[selected].scrollIntoView({ block: "nearest" });
  }

  async function load() {
    const response = await OCR.request("GET", `${table.dataset.api}?order=${order.value}`);
    rows = response.ok ? response.body.pages : [];
    body.textContent = "";
    for (const row of rows) {
      const tr = document.createElement("tr");
      const link = document.createElement("a");
      link.href = row.url;
      link.textContent = row.document;
      const cells = [link, `${row.page_number}`,
        row.mean_confidence === null ? "–" : `${Math.round(row.mean_confidence * 100)} %`, `${row.open_lines}`];
      for (const cell of cells) {
        const td = document.createElement("td");
        td.append(cell);
        tr.append(td);
      }
      body.append(tr);
    }
    if (!rows.length) body.innerHTML = '<tr><td colspan="4" class="muted">Nothing to review.</td></tr>';
    select(0);
  }

  document.addEventListener("keydown", (event) => {
    if (event.target.closest("input, select, textarea") || event.altKey || event.ctrlKey || event.metaKey) return;
    const keys = { j: () => select(selected + 1), ArrowDown: () => select(selected + 1),
      k: () => select(selected - 1), ArrowUp: () => select(selected - 1),
      Enter: () => { if (rows[selected]) location.href = rows[selected].url; } };
    if (!keys[event.key]) return;
    event.preventDefault();
    keys[event.key]();
  });
  order.addEventListener("change", load);
  load();
})();
