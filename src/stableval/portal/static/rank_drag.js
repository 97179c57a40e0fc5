// Drag and drop for the rank-documents form: progressive enhancement only. Without this script (or with the
// keyboard) the "Up"/"Down" buttons and the place-number boxes do the same; a drop rewrites the number boxes, which
// the server reads on any button press, so nothing is stored until "Review and submit" or "Apply numbers".
(function () {
  "use strict";
  var list = document.querySelector("ol.rank-items");
  if (!list || !("draggable" in document.createElement("span"))) { return; }
  var status = document.createElement("p");
  status.className = "visually-hidden";
  status.setAttribute("role", "status");
  list.parentNode.insertBefore(status, list);
  var dragged = null;
  var hint = document.getElementById("rank-hint");
  if (hint) { hint.textContent += " With a mouse, you may also drag a text by its \u201c\u2630 Drag\u201d handle."; }

  function items() { return Array.prototype.slice.call(list.querySelectorAll("li.rank-item")); }

  // Place numbers, labels and the first/last buttons follow the order on screen.
  function renumber() {
    var all = items();
    all.forEach(function (li, i) {
      var n = String(i + 1);
      var box = li.querySelector("input.rank-number");
      var label = li.querySelector(".rank-controls label");
      var buttons = li.querySelectorAll(".rank-controls button");
      var region = li.querySelector("[role=region]");
      if (box) { box.value = n; }
      if (label) { label.textContent = "Place of text " + n; }
      if (region) { region.setAttribute("aria-label", "Text " + n); }
      if (buttons.length === 2) {
        buttons[0].setAttribute("aria-label", "Move text " + n + " up");
        buttons[1].setAttribute("aria-label", "Move text " + n + " down");
        buttons[0].disabled = i === 0;
        buttons[1].disabled = i === all.length - 1;
      }
    });
  }

  items().forEach(function (li) {
    var handle = document.createElement("span");
    handle.className = "drag-handle";
    handle.setAttribute("draggable", "true");
    handle.setAttribute("aria-hidden", "true");  // keyboard and screen-reader users have the buttons
    handle.title = "Drag to reorder";
    handle.textContent = "\u2630 Drag";
    li.querySelector(".rank-controls").insertBefore(handle, li.querySelector(".rank-controls").firstChild);
  });

  list.addEventListener("dragstart", function (event) {
    var handle = event.target.closest ? event.target.closest(".drag-handle") : null;
    if (!handle) { return; }
    dragged = handle.closest("li.rank-item");
    dragged.classList.add("dragging");
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", dragged.id);
    if (event.dataTransfer.setDragImage) { event.dataTransfer.setDragImage(dragged, 10, 10); }
  });
  list.addEventListener("dragover", function (event) {
    if (!dragged) { return; }
    event.preventDefault();
    var over = event.target.closest ? event.target.closest("li.rank-item") : null;
    if (!over || over === dragged) { return; }
    var box = over.getBoundingClientRect();
    list.insertBefore(dragged, event.clientY > box.top + box.height / 2 ? over.nextSibling : over);
  });
  list.addEventListener("drop", function (event) { if (dragged) { event.preventDefault(); } });
  list.addEventListener("dragend", function () {
    if (!dragged) { return; }
    dragged.classList.remove("dragging");
    renumber();
    status.textContent = "Moved to place " + (items().indexOf(dragged) + 1) + " of " + items().length +
      ". Press \u201cReview and submit\u201d or \u201cApply numbers\u201d to keep the order.";
    dragged = null;
  });
})();
