/* Dashboard: live status and progress of the user's jobs, and of their batches, over ws/jobs/. */
"use strict";

(() => {
  const table = document.getElementById("jobs-table");
  if (!table) return;
  const tbody = table.tBodies[0];
  const note = document.getElementById("live-note");
  const jobUrl = (id) => table.dataset.jobUrl.replace("00000000-0000-0000-0000-000000000000", id);
  // New jobs are added only on the first page of the list (newest first).
  const firstPage = !new URLSearchParams(location.search).get("page") ||
    new URLSearchParams(location.search).get("page") === "1";

  function rowFor(job) {
    let row = tbody.querySelector(`tr[data-job-id="${job.id}"]`);
    if (row || !firstPage) return row;
    const empty = tbody.querySelector(".empty-row");
    if (empty) empty.remove();
    row = document.getElementById("job-row-template").content.firstElementChild.cloneNode(true);
    row.dataset.jobId = job.id;
    const link = row.querySelector("a");
    link.href = jobUrl(job.id);
    link.textContent = job.document || job.id;
    row.querySelector('[data-role="meta"]').textContent = job.pipeline;
    const time = row.querySelector("time");
    time.dateTime = job.created_at || "";
    time.textContent = OCR.formatTime(job.created_at);
    tbody.prepend(row);
    return row;
  }

  function updateBatch(batch) {
    const article = document.querySelector(`.batch[data-batch-id="${batch.id}"]`);
    if (!article) return; // a batch made since this page was loaded: it shows on the next load
    OCR.setStatus(article.querySelector('.batch-head [data-role="status"]'), batch.status);
    OCR.setProgress(article.querySelector('[data-role="progress"]'), batch.progress.jobs_done, batch.progress.jobs_total);
  }

  function update(message) {
    if (message.event === "batch") {
      updateBatch(message.batch);
      return;
    }
    const job = message.job;
    document.querySelectorAll(`.batch-jobs [data-job-id="${job.id}"] [data-role="status"]`)
      .forEach((badge) => OCR.setStatus(badge, message.status));
    const row = rowFor(job);
    if (!row) return;
    OCR.setStatus(row.querySelector('[data-role="status"]'), message.status);
    OCR.setProgress(row.querySelector('[data-role="progress"]'), job.pages_done, job.pages_total);
    row.classList.toggle("row-flash", true);
    setTimeout(() => row.classList.remove("row-flash"), 800);
  }

  OCR.socket(table.dataset.ws, {
    onMessage: update,
    onState: (state) => { note.textContent = state === "open" ? "Live: statuses update as jobs progress." : "Reconnecting…"; },
  });
})();
