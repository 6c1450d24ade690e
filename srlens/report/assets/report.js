// srlens report: sortable and filterable tables. Plain JavaScript, no dependencies; the pages
// read fine without it. Every <table class="data"> gets a sort button in each column header
// (first press ascending, then descending) and, when it has more than 8 rows, a filter box.
"use strict";

function cellValue(cell) {
  // A numeric cell sorts by its data-sort value or the number it starts with; others by text.
  if (cell.dataset.sort !== undefined && cell.dataset.sort !== "") return Number(cell.dataset.sort);
  const text = cell.textContent.trim();
  const number = Number.parseFloat(text.replace(/,/g, ""));
  if (/^[-+]?[\d.,]+/.test(text) && !Number.isNaN(number)) return number;
  return text === "–" ? null : text.toLowerCase();
}

function compare(a, b) {
  if (a === b) return 0;
  if (a === null) return 1;  // missing values last, whatever the direction
  if (b === null) return -1;
  if (typeof a === typeof b) return a < b ? -1 : 1;
  return typeof a === "number" ? -1 : 1;  // numbers before text
}

function sortBy(table, column, header) {
  const body = table.tBodies[0];
  const descending = header.getAttribute("aria-sort") === "ascending";
  const rows = Array.from(body.rows).map((row, i) => [cellValue(row.cells[column]), i, row]);
  rows.sort((x, y) => {
    if (x[0] === null || y[0] === null) return compare(x[0], y[0]) || x[1] - y[1];
    return (descending ? -compare(x[0], y[0]) : compare(x[0], y[0])) || x[1] - y[1];
  });
  rows.forEach((r) => body.appendChild(r[2]));
  for (const th of header.parentElement.children) th.removeAttribute("aria-sort");
  header.setAttribute("aria-sort", descending ? "descending" : "ascending");
}

function makeSortable(table) {
  const headers = table.tHead ? Array.from(table.tHead.rows[0].cells) : [];
  headers.forEach((th, column) => {
    const button = document.createElement("button");
    button.type = "button";
    button.title = "sort by this column";
    while (th.firstChild) button.appendChild(th.firstChild);
    th.appendChild(button);
    button.addEventListener("click", () => sortBy(table, column, th));
  });
}

function makeFilterable(table) {
  const input = document.createElement("input");
  input.type = "search";
  input.className = "filter";
  input.placeholder = "filter rows";
  input.setAttribute("aria-label", "filter the rows of the table below");
  input.addEventListener("input", () => {
    const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    for (const row of table.tBodies[0].rows) {
      const text = row.textContent.toLowerCase();
      row.hidden = !words.every((w) => text.includes(w));
    }
  });
  table.parentElement.insertBefore(input, table);
}

document.addEventListener("DOMContentLoaded", () => {
  for (const table of document.querySelectorAll("table.data")) {
    if (!table.tBodies.length) continue;
    makeSortable(table);
    if (table.tBodies[0].rows.length > 8) makeFilterable(table);
  }
});
