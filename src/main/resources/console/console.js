// Syncular operator console: progressive enhancement only; every page works without it.
// Sections marked data-refresh="<ms>" are refreshed in place from the same URL (same origin, the session cookie).
const sections = [...document.querySelectorAll("[data-refresh]")];
if (sections.length > 0) {
  const every = Math.max(2000, Number(sections[0].dataset.refresh) || 5000);
  const refresh = async () => {
    if (document.hidden) return;
    try {
      const answer = await fetch(location.href, { credentials: "same-origin", headers: { Accept: "text/html" } });
      if (!answer.ok || answer.redirected) return;
      const doc = new DOMParser().parseFromString(await answer.text(), "text/html");
      const fresh = [...doc.querySelectorAll("[data-refresh]")];
      sections.forEach((section, i) => {
        if (fresh[i]) section.replaceChildren(...fresh[i].childNodes);
      });
    } catch (e) {
      // offline or signed out: the next refresh tries again
    }
  };
  setInterval(refresh, every);
}

// A file input marked data-into="<id>" reads the chosen file into that text area (the schema plan's upload).
for (const input of document.querySelectorAll("input[type=file][data-into]")) {
  input.addEventListener("change", async () => {
    const file = input.files[0];
    const target = document.getElementById(input.dataset.into);
    if (file && target) target.value = await file.text();
  });
}
