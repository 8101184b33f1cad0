// Quick filter: hide memory rows whose text does not contain what is typed (this page only).
document.addEventListener("DOMContentLoaded", () => {
  const box = document.getElementById("quick-filter");
  if (!box) return;
  box.addEventListener("input", () => {
    const needle = box.value.trim().toLowerCase();
    for (const row of document.querySelectorAll("#memory-table tr.memory")) {
      row.hidden = needle !== "" && !row.textContent.toLowerCase().includes(needle);
    }
  });
});
