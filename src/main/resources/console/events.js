// Live events: the pod's operational event tail over server-sent events, newest on top.
const table = document.getElementById("events");
const state = document.getElementById("stream-state");
const body = table.querySelector("tbody");
const source = new EventSource(table.dataset.stream, { withCredentials: true });
const cell = (row, text) => {
  const td = document.createElement("td");
  td.textContent = text;
  row.appendChild(td);
  return td;
};
source.onopen = () => { state.textContent = "streaming"; };
source.onerror = () => { state.textContent = "disconnected (retrying)"; };
source.onmessage = (message) => {
  const e = JSON.parse(message.data);
  const row = document.createElement("tr");
  row.className = "fresh";
  row.dataset.kind = e.kind;
  row.dataset.partition = e.partition ?? "";
  cell(row, String(e.seq)).className = "num";
  cell(row, new Date(e.atMs).toISOString());
  cell(row, e.kind);
  cell(row, e.code ?? "");
  cell(row, e.partition ?? "");
  cell(row, JSON.stringify(e.details ?? {}));
  body.prepend(row);
  while (body.rows.length > 500) body.deleteRow(body.rows.length - 1);
};
