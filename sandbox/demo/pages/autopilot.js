// The demo's scripted browser agent. Opened with #autopilot=<JSON> in the URL (a fragment is
// never sent to any server), it does what a browser agent does on this page: fill the form's
// fields by name, attach files, press the submit button. The page's own code sends the request.
(function () {
  const m = location.hash.match(/^#autopilot=(.*)$/);
  if (!m) return;
  const plan = JSON.parse(decodeURIComponent(m[1]));
  window.addEventListener('load', () => {
    const form = document.querySelector('form');
    for (const [name, value] of Object.entries(plan.fields || {})) {
      for (const el of form.querySelectorAll(`[name="${name}"]`)) {
        if (el.type === 'radio' || el.type === 'checkbox') el.checked = el.value === value;
        else el.value = value;
      }
    }
    for (const [name, f] of Object.entries(plan.files || {})) {
      const bytes = Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      if (f.filename) dt.items.add(new File([bytes], f.filename, {type: f.type}));
      form.querySelector(`[name="${name}"]`).files = dt.files;
    }
    console.log(`clawbench autopilot: ${Object.keys(plan.fields || {}).length} fields filled, submitting`);
    form.querySelector('[type=submit]').click();
  });
})();
