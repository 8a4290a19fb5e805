/* Upload page: drag and drop, several files, per-file progress, and errors shown
   next to the file or option they concern. Each file is posted to the REST API
   (POST /api/v1/jobs), which runs the same job_create service as the plain form
   this script enhances; a ZIP goes to POST /api/v1/batches, one job per file in it. */
"use strict";

(() => {
  const form = document.getElementById("upload-form");
  if (!form) return;
  const input = form.querySelector('input[type="file"]');
  const dropzone = document.getElementById("dropzone");
  const list = document.getElementById("file-list");
  const submit = document.getElementById("upload-submit");
  const formError = document.getElementById("form-error");
  const items = []; // {file, state: "pending"|"uploading"|"done"|"error", li}
  // The job options (jobs.options.JobOptions), each a field of this form sent under its own name.
  const JOB_OPTIONS = ["pipeline", "lang", "text_layer", "orientation", "pages", "webhook_url", "document_type"];

  const jobUrl = (id) => form.dataset.jobUrl.replace("00000000-0000-0000-0000-000000000000", id);
  const isZip = (file) => file.name.toLowerCase().endsWith(".zip");
  const size = (n) => (n > 1048576 ? `${(n / 1048576).toFixed(1)} MB` : `${Math.max(1, Math.round(n / 1024))} KB`);

  function fieldError(name, message) {
    const box = form.querySelector(`[data-error-for="${name}"]`);
    box.textContent = "";
    if (message) {
      const p = document.createElement("p");
      p.textContent = message;
      box.append(p);
    }
    const field = box.closest(".field, .dropzone");
    if (field) field.classList.toggle("has-error", Boolean(message));
  }

  function showFormError(message) {
    formError.textContent = message || "";
    formError.hidden = !message;
  }

  function clearErrors() {
    ["files", ...JOB_OPTIONS].forEach((name) => fieldError(name, ""));
    showFormError("");
  }

  function addFiles(files) {
    list.querySelectorAll(".file-item:not([data-js])").forEach((li) => li.remove()); // server-rendered outcomes
    for (const file of files) {
      const li = document.createElement("li");
      li.className = "file-item";
      li.dataset.js = "1";
      li.innerHTML = '<span class="file-name"></span><span class="file-size muted small"></span>' +
        '<span class="file-status"></span><progress max="100" value="0" hidden></progress>' +
        '<button type="button" class="icon-btn remove" aria-label="Remove">×</button>';
      li.querySelector(".file-name").textContent = file.name;
      li.querySelector(".file-size").textContent = size(file.size);
      li.querySelector(".remove").setAttribute("aria-label", `Remove ${file.name}`);
      const item = { file, state: "pending", li };
      li.querySelector(".remove").addEventListener("click", () => {
        items.splice(items.indexOf(item), 1);
        li.remove();
      });
      items.push(item);
      list.append(li);
    }
    fieldError("files", "");
  }

  function setItem(item, state, html) {
    item.state = state;
    item.li.classList.remove("is-error", "is-done", "is-uploading");
    item.li.classList.add(`is-${state}`);
    const status = item.li.querySelector(".file-status");
    status.textContent = "";
    if (html) status.append(html);
    status.setAttribute("role", state === "error" ? "alert" : "status");
    item.li.querySelector(".remove").hidden = state === "done" || state === "uploading";
  }

  function text(s, cls) {
    const span = document.createElement("span");
    span.textContent = s;
    if (cls) span.className = cls;
    return span;
  }

  function post(item) {
    return new Promise((resolve) => {
      const data = new FormData();
      data.append("file", item.file, item.file.name);
      for (const name of JOB_OPTIONS) data.append(name, form.elements[name].value);
      const xhr = new XMLHttpRequest();
      xhr.open("POST", isZip(item.file) ? form.dataset.batchApi : form.dataset.api);
      xhr.setRequestHeader("X-CSRFToken", form.elements.csrfmiddlewaretoken.value);
      xhr.setRequestHeader("Accept", "application/json");
      const bar = item.li.querySelector("progress");
      bar.hidden = false;
      xhr.upload.onprogress = (e) => { if (e.lengthComputable) bar.value = (100 * e.loaded) / e.total; };
      xhr.onload = () => {
        bar.hidden = true;
        let body = null;
        try { body = JSON.parse(xhr.responseText); } catch (e) { body = null; }
        resolve({ status: xhr.status, body });
      };
      xhr.onerror = () => { bar.hidden = true; resolve({ status: 0, body: null }); };
      xhr.send(data);
    });
  }

  async function upload() {
    clearErrors();
    const todo = items.filter((i) => i.state !== "done");
    if (!todo.length) {
      fieldError("files", "Choose at least one file.");
      return;
    }
    submit.disabled = true;
    const done = [];
    for (const item of todo) {
      setItem(item, "uploading", text("Uploading…"));
      const { status, body } = await post(item);
      if (status === 202 && body.jobs) { // a batch (jobs/api/batches.py)
        const refused = body.errors.length ? `; ${body.errors.length} file(s) refused: ` +
          body.errors.map((e) => `${e.member} (${e.code})`).join(", ") : "";
        setItem(item, "done", text(`Batch queued: ${body.jobs.length} job(s)${refused}`));
        done.push(body);
        continue;
      }
      if (status === 200 || status === 202) {
        const link = document.createElement("a");
        link.href = jobUrl(body.id);
        link.textContent = "open job";
        const wrap = document.createElement("span");
        wrap.append(text(body.reused ? "Submitted before: " : "Queued: "), link);
        setItem(item, "done", wrap);
        done.push(body);
        continue;
      }
      const code = body && body.code ? body.code : "network_error";
      const detail = body && body.detail ? body.detail : "The server could not be reached. Try again.";
      if (body && ("field" in body || code === "url_not_allowed")) { // about an option, not this file
        // (jobs.errors.OPTION_FIELD_BY_CODE); the only URL this form sends is the webhook's
        setItem(item, "pending", text(""));
        const field = code === "url_not_allowed" ? "webhook_url" : body.field;
        if (field) fieldError(field, detail); else showFormError(detail);
        break; // the same options would fail for every other file too
      }
      if (code === "invalid_request" && body.fields) {
        let placed = false;
        for (const [name, errors] of Object.entries(body.fields)) {
          if (JOB_OPTIONS.includes(name)) { fieldError(name, [].concat(errors).join(" ")); placed = true; }
        }
        if (placed) { setItem(item, "pending", text("")); break; }
      }
      const message = document.createElement("span");
      message.append(text(detail + " "), text(code, "code"));
      setItem(item, "error", message);
    }
    submit.disabled = false;
    if (done.length && done.length === items.length) {
      // A batch's refused files are listed with it on the dashboard.
      location.href = done.length === 1 && !done[0].jobs ? jobUrl(done[0].id) : form.dataset.dashboard;
    }
  }

  input.addEventListener("change", () => { addFiles(input.files); input.value = ""; });
  ["dragenter", "dragover"].forEach((type) => dropzone.addEventListener(type, (e) => {
    e.preventDefault();
    dropzone.classList.add("is-over");
  }));
  ["dragleave", "drop"].forEach((type) => dropzone.addEventListener(type, (e) => {
    e.preventDefault();
    dropzone.classList.remove("is-over");
  }));
  dropzone.addEventListener("drop", (e) => addFiles(e.dataTransfer.files));
  // The whole zone opens the file chooser, by mouse or keyboard.
  dropzone.tabIndex = 0;
  dropzone.setAttribute("role", "button");
  dropzone.setAttribute("aria-label", "Choose files to upload, or drop them here");
  dropzone.addEventListener("click", (e) => { if (e.target === dropzone || !e.target.closest("label, input")) input.click(); });
  dropzone.addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === " ") { e.preventDefault(); input.click(); }
  });
  form.addEventListener("submit", (e) => { e.preventDefault(); upload(); });
  form.classList.add("js-enhanced");
})();
