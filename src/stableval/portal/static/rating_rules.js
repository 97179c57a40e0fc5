// Step 2 (pairwise): the consistency rules applied as the rater clicks. Progressive enhancement only: the page and
// the server's check work without it. Each criterion's fieldset carries data-allowed, the table the server derives
// from the track's rules (stableval.portal.tasks.rules.live_rules): {"a": {rating of B: ratings of A allowed},
// "b": {rating of A: ratings of B allowed}}. A rating the other side's choice rules out is disabled, unless it is
// the one already chosen (a saved draft is never changed behind the rater's back; the server names the problem).
(function () {
  "use strict";
  var other = {a: "b", b: "a"};
  function checked(radios) {
    for (var i = 0; i < radios.length; i++) { if (radios[i].checked) { return radios[i].value; } }
    return "";
  }
  function restrict(fieldset) {
    var table;
    try { table = JSON.parse(fieldset.getAttribute("data-allowed")); } catch (error) { return; }
    var key = fieldset.getAttribute("data-key");
    var radios = {a: fieldset.querySelectorAll('input[name="ra-' + key + '"]'),
                  b: fieldset.querySelectorAll('input[name="rb-' + key + '"]')};
    ["a", "b"].forEach(function (side) {
      var given = checked(radios[other[side]]);
      var allowed = table[side] && table[side][given];
      for (var i = 0; i < radios[side].length; i++) {
        var radio = radios[side][i];
        var off = Boolean(allowed) && allowed.indexOf(radio.value) < 0 && !radio.checked;
        radio.disabled = off;
        radio.parentNode.classList.toggle("ruled-out", off);
        if (off) { radio.parentNode.title = "Not consistent with your step-1 choice"; }
        else { radio.parentNode.removeAttribute("title"); }
      }
    });
  }
  var fieldsets = document.querySelectorAll("fieldset[data-allowed]");
  for (var i = 0; i < fieldsets.length; i++) {
    (function (fieldset) {
      restrict(fieldset);
      fieldset.addEventListener("change", function () { restrict(fieldset); });
    })(fieldsets[i]);
  }
})();
