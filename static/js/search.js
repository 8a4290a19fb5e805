/* Dashboard search: GET /api/v1/search, each matching line as its snippet, linked to the review
   of its page with the line selected (links.review: /jobs/<id>/?page=N&line=L). */
"use strict";

(() => {
  const form = document.getElementById("search-form");
  if (!form) return;
  const count = document.getElementById("search-count");
  const list = document.getElementById("search-results");

  function item(hit) {
    const li = document.createElement("li");
    const link = document.createElement("a");
    link.href = hit.links.review;
    link.textContent = `Page ${hit.page} · ${hit.line_id}`;
    const text = document.createElement("span");
    text.className = "snippet";
    text.innerHTML = hit.snippet; // HTML-escaped by the server, the query's words in <mark>
    li.append(link, " ", text);
    return li;
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const url = new URL(form.dataset.api, location.href);
    url.searchParams.set("q", form.elements.q.value);
    const response = await OCR.request("GET", url);
    count.hidden = false;
    list.replaceChildren();
    if (!response.ok) {
      count.textContent = (response.body && response.body.detail) || "The search failed.";
      return;
    }
    const { count: total, results } = response.body;
    count.textContent = total === 0 ? "No lines found." :
      `${total} line${total === 1 ? "" : "s"} found${total > results.length ? `, the best ${results.length} shown` : ""}.`;
    list.append(...results.map(item));
  });
})();
