// z0-memory inspector: the only script. A submitted form's button is disabled (no double confirm/forget), and
// a running recall says so. Pages work without it.
document.addEventListener("submit", function (event) {
  var button = event.target.querySelector("button[type=submit]");
  if (button) {
    window.setTimeout(function () { button.disabled = true; }, 0);
    if (event.target.classList.contains("recall-form")) { button.textContent = "Recalling…"; }
  }
});
