// Progressive enhancement only: every page works without this script.
(function () {
  "use strict";
  window.scrollTo(0, 0);
  var summary = document.getElementById("error-summary");
  if (summary) { summary.focus(); }
  var form = document.querySelector("form[data-autosave]");
  if (!form || !window.fetch || !window.FormData) { return; }
  var timer = null;
  function save() {
    var data = new FormData(form);
    data.set("step", form.getAttribute("data-step"));
    data.delete("action");
    // URL-encoded, not multipart: the server takes no multipart body on rater routes
    fetch(form.getAttribute("data-autosave"), {method: "POST", body: new URLSearchParams(data),
                                               credentials: "same-origin"});
  }
  form.addEventListener("change", save);
  form.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(save, 600); });
})();
