/* Job page: the job's status and actions, the page strip, and live events over
   ws/jobs/<id>/. Loaded last: it starts the page. */
"use strict";

(() => {
  const ui = window.OCRJob;
  const { cfg, state, el } = ui;

  /* ---------- job status, actions, live events ---------- */

  function renderJob() {
    const job = state.job;
    OCR.setStatus(el.status, job.status);
    OCR.setProgress(el.progress, job.pages_done, job.pages_total);
    const active = job.status === "queued" || job.status === "running";
    el.btnCancel.hidden = !active;
    el.btnRetry.hidden = job.status !== "failed";
    el.btnReviewed.hidden = active || state.pages.size === 0 || Boolean(job.reviewed);
    el.error.hidden = !job.error;
    if (job.error) el.error.querySelector("[data-role=code]").textContent = job.error.code;
  }

  function onEvent(message) {
    state.job = { ...state.job, ...message.job };
    for (const page of message.pages || []) state.pages.set(page.page_number, page);
    if (message.event === "page_done") {
      state.pages.set(message.page_number, {
        page_number: message.page_number, page_status: message.page_status,
        line_count: message.line_count, region_count: message.region_count,
      });
    }
    if (message.event === "queued") {
      // A retry removed the failed pages: forget what we knew about them.
      for (const [n, page] of state.pages) if (page.page_status === "failed") state.pages.delete(n);
    }
    renderJob();
    renderThumbs();
    if (ui.onFieldsEvent) ui.onFieldsEvent(message);
    // Issue 14 hook: a reviewer's correction in any tab redraws the page it changed.
    if (message.event === "corrected") {
      if (message.page_number === state.current) ui.loadPage(state.current);
      return;
    }
    if (message.event === "failed") showJobError();
    const ready = state.pages.has(state.current);
    // A page on screen as "failed" may have been redone by a retry.
    const redone = message.event === "page_done" && message.page_number === state.current && !state.data;
    if (ready && (state.shown !== state.current || redone)) ui.loadPage(state.current);
    else if (!state.navigated && !ready && state.pages.size) ui.loadPage(firstReadyPage());
    else if (!ready && state.current) ui.showPlaceholder(state.current);
  }

  async function showJobError() {
    const response = await OCR.request("GET", cfg.links.self);
    if (response.ok && response.body.error) {
      el.error.querySelector("[data-role=detail]").textContent = response.body.error.detail;
    }
  }

  async function act(url, done) {
    const response = await OCR.request("POST", url);
    if (!response.ok) {
      ui.toast(response.body && response.body.detail ? response.body.detail : "The action failed.", true);
      return;
    }
    done(response.body);
  }

  el.btnCancel.addEventListener("click", () => {
    if (!window.confirm("Cancel this job? Pages already read are kept.")) return;
    act(cfg.links.cancel, (job) => {
      state.job.status = job.status;
      renderJob();
      ui.toast("Job canceled.");
    });
  });
  el.btnRetry.addEventListener("click", () => act(cfg.links.retry, (job) => {
    state.job.status = job.status;
    renderJob();
    ui.toast("Failed pages queued again.");
  }));
  el.btnReviewed.addEventListener("click", () => act(cfg.links.reviewed, (job) => {
    state.job.reviewed = true;
    renderJob();
    el.reviewed.hidden = false;
    el.reviewed.querySelector("[data-role=reviewed-by]").textContent =
      `by ${job.reviewed_by || "—"}, ${OCR.formatTime(job.reviewed_at)}`;
    ui.toast("Marked as reviewed.");
  }));

  /* ---------- page strip ---------- */

  function renderThumbs() {
    if (!el.thumbs.children.length) {
      const frag = document.createDocumentFragment();
      for (const n of state.job.page_numbers) {
        const li = document.createElement("li");
        li.innerHTML = `<button type="button" class="thumb" data-n="${n}"><span class="thumb-img"></span>` +
          `<span class="thumb-no">${n}</span></button>`;
        frag.append(li);
      }
      el.thumbs.append(frag);
    }
    for (const button of el.thumbs.querySelectorAll(".thumb")) {
      const n = Number(button.dataset.n);
      const page = state.pages.get(n);
      const status = page ? page.page_status : "pending";
      button.dataset.status = status;
      button.setAttribute("aria-label", `Page ${n}${status === "pending" ? " (not processed yet)" : status === "failed" ? " (failed)" : ""}`);
      if (n === state.current) button.setAttribute("aria-current", "page");
      else button.removeAttribute("aria-current");
      const box = button.firstElementChild;
      if (status === "succeeded" && !box.firstElementChild) {
        const img = document.createElement("img");
        img.alt = "";
        img.loading = "lazy";
        img.src = OCR.expand(cfg.links.page_thumbnail, { page_number: n });
        box.append(img);
      }
    }
  }

  el.thumbs.addEventListener("click", (event) => {
    const button = event.target.closest(".thumb");
    if (!button) return;
    state.navigated = true;
    ui.loadPage(Number(button.dataset.n));
  });

  function firstReadyPage() {
    return state.job.page_numbers.find((n) => state.pages.has(n)) || state.job.page_numbers[0];
  }

  function stepPage(delta) {
    const numbers = state.job.page_numbers;
    const at = numbers.indexOf(state.current);
    const next = numbers[Math.min(numbers.length - 1, Math.max(0, at + delta))];
    if (next !== undefined && next !== state.current) {
      state.navigated = true;
      ui.loadPage(next);
      const thumb = el.thumbs.querySelector(`.thumb[data-n="${next}"]`);
      if (thumb) thumb.scrollIntoView({ block: "nearest", inline: "nearest" });
    }
  }

  let resizeTimer = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => { if (state.data) ui.fitWidth(); }, 150);
  });

  Object.assign(ui, { renderThumbs, stepPage });

  // Start: the page in ?page=, else the first finished one; then follow the job live.
  // ?line= (a search hit's link) selects that line of the page once it is drawn, and scrolls to it.
  renderJob();
  renderThumbs();
  const params = new URLSearchParams(location.search);
  const requested = Number(params.get("page"));
  if (requested && state.job.page_numbers.includes(requested)) {
    state.navigated = true;
    state.selectOnDraw = params.get("line");
  }
  ui.loadPage(state.navigated ? requested : firstReadyPage());
  OCR.socket(cfg.ws, { onMessage: onEvent });
})();
