// The new-run form: only the fieldsets of the chosen kind are enabled (a
// disabled fieldset's fields are not sent, so another kind's flags cannot
// reach the parser).
(function () {
  "use strict";
  var kind = document.getElementById("kind");
  if (!kind) { return; }
  function apply() {
    var sets = document.querySelectorAll("fieldset[data-kinds]");
    for (var i = 0; i < sets.length; i++) {
      var on = sets[i].dataset.kinds.split(" ").indexOf(kind.value) >= 0;
      sets[i].disabled = !on;
      sets[i].classList.toggle("hidden", !on);
    }
  }
  kind.addEventListener("change", apply);
  apply();
})();
