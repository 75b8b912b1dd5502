// The management page: plain JavaScript over the same /me API (docs/api.md); no build step.
// Everything the user wrote is shown with textContent, never parsed as HTML.
"use strict";

const state = { token: sessionStorage.getItem("memrecall-token") || "" };
const $ = (sel, root = document) => root.querySelector(sel);

function say(text) { $("#status").textContent = text; }

async function api(method, path, body) {
  const init = { method, headers: { Authorization: "Bearer " + state.token } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const data = await response.json().catch(() => ({}));
  if (response.status === 401) { signOut("That token was not accepted."); }
  return { status: response.status, data };
}

async function pages(path) {
  let items = [], cursor = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const url = path + sep + "limit=200" + (cursor ? "&cursor=" + encodeURIComponent(cursor) : "");
    const { status, data } = await api("GET", url);
    if (status !== 200) { throw new Error(data.message || "could not load " + path); }
    items = items.concat(data.items);
    cursor = data.next_cursor;
  } while (cursor);
  return items;
}

function scopeLabel(item) {
  return item.scope_type === "global" ? "global" : "workspace: " + item.workspace_type;
}

function when(iso) { return iso ? new Date(iso).toLocaleString() : ""; }

function fail(data) { say(data.message || "Something went wrong."); }

// ---------------------------------------------------------------- memories

function renderMemory(m) {
  const node = $("#memory-template").content.firstElementChild.cloneNode(true);
  node.dataset.memoryId = m.memory_id;
  node.classList.toggle("suppressed", m.status === "suppressed");
  $(".key", node).textContent = m.key;
  $(".status", node).textContent = m.status;
  $(".details", node).textContent =
    `${m.category} · ${scopeLabel(m)} · source: ${m.source_type} · revision ${m.revision} · updated ${when(m.updated_at)}`;
  $(".content", node).textContent = m.content;
  const editor = $(".editor", node);
  $(".edit", node).onclick = () => {
    editor.hidden = false;
    editor.content.value = m.content;
    editor.category.value = m.category;
  };
  $(".cancel", node).onclick = () => { editor.hidden = true; };
  editor.onsubmit = async (event) => {
    event.preventDefault();
    const { status, data } = await api("PATCH", `/me/core-memories/${m.memory_id}`, {
      content: editor.content.value, category: editor.category.value,
      expected_revision: m.revision,
    });
    if (status === 409) {
      const box = $(".conflict", editor);
      box.hidden = false;
      box.textContent = `This memory changed since you opened it (you edited revision ${m.revision}, ` +
        `it is now revision ${data.current_revision}). Your text was not saved; ` +
        "reload to see the current version, then edit again.";
      return;
    }
    if (status !== 200) { return fail(data); }
    say("Saved.");
    await loadMemories();
  };
  const toggle = $(".toggle", node);
  toggle.textContent = m.status === "suppressed" ? "Restore" : "Suppress";
  toggle.onclick = async () => {
    const action = m.status === "suppressed" ? "restore" : "suppress";
    const path = action === "restore"
      ? `/me/core-memories/${m.memory_id}/restore`
      : `/me/core-memories/${m.memory_id}/suppress`;
    const { status, data } = await api("POST", path);
    if (status !== 200) { return fail(data); }
    say(action === "restore" ? "Restored." : "Suppressed: agents no longer see it.");
    await loadMemories();
  };
  $(".history", node).onclick = () => showHistory(node, m);
  $(".forget", node).onclick = async () => {
    const ok = window.confirm(`Forget "${m.key}" for good? Its text and every earlier version ` +
      "are deleted. This cannot be undone.");
    if (!ok) { return; }
    const { status, data } = await api("DELETE", `/me/core-memories/${m.memory_id}`);
    if (status !== 200) { return fail(data); }
    say("Forgotten.");
    await loadMemories();
  };
  return node;
}

async function showHistory(node, m) {
  const list = $(".versions", node);
  list.hidden = !list.hidden;
  if (list.hidden) { return; }
  list.replaceChildren();
  for (const v of await pages(`/me/core-memories/${m.memory_id}/versions`)) {
    const li = document.createElement("li");
    const text = document.createElement("span");
    text.textContent = `revision ${v.revision} (${v.change_type}, ${when(v.created_at)}): ${v.content}`;
    li.append(text);
    if (v.revision !== m.revision) {
      const button = document.createElement("button");
      button.textContent = "Restore this version";
      button.onclick = async () => {
        const { status, data } = await api("POST",
          `/me/core-memories/${m.memory_id}/versions/${v.revision}/restore`,
          { expected_revision: m.revision });
        if (status === 409) {
          say(`This memory changed meanwhile (now revision ${data.current_revision}); reload first.`);
          return;
        }
        if (status !== 200) { return fail(data); }
        say(`Restored revision ${v.revision} as a new revision.`);
        await loadMemories();
      };
      li.append(" ", button);
    }
    list.append(li);
  }
}

async function loadMemories() {
  const memories = await pages("/me/core-memories");
  const groups = $("#groups");
  groups.replaceChildren();
  const order = ["global", "workspace: learning", "workspace: teaching", "workspace: research"];
  for (const label of order) {
    const members = memories.filter((m) => scopeLabel(m) === label);
    if (!members.length) { continue; }
    const section = document.createElement("section");
    section.dataset.scope = label;
    const h3 = document.createElement("h3");
    h3.textContent = `${label} (${members.length})`;
    section.append(h3, ...members.map(renderMemory));
    groups.append(section);
  }
  if (!memories.length) { groups.textContent = "Nothing is remembered."; }
}

$("#new-memory").onsubmit = async (event) => {
  event.preventDefault();
  const form = event.target;
  const scope = form.scope.value;
  const body = { key: form.key.value, content: form.content.value, category: form.category.value,
    scope_type: scope === "global" ? "global" : "workspace" };
  if (scope !== "global") { body.workspace_type = scope; }
  const { status, data } = await api("POST", "/me/core-memories", body);
  if (status === 409) { return say("That key already holds other text: edit that memory instead."); }
  if (status !== 200 && status !== 201) { return fail(data); }
  form.reset();
  say("Remembered.");
  await loadMemories();
};

// ---------------------------------------------------------------- candidates

function renderCandidate(c) {
  const node = $("#candidate-template").content.firstElementChild.cloneNode(true);
  node.dataset.candidateId = c.candidate_id;
  $(".key", node).textContent = c.key;
  $(".details", node).textContent =
    `${c.operation} · ${scopeLabel(c)} · proposed ${when(c.created_at)}`;
  node.querySelector("[name=content]").value = c.content || "";
  node.querySelector("[name=category]").value = c.category;
  $(".accept", node).onclick = async () => {
    const edits = {};
    const content = node.querySelector("[name=content]").value;
    const category = node.querySelector("[name=category]").value;
    if (content !== c.content) { edits.content = content; }
    if (category !== c.category) { edits.category = category; }
    const { status, data } = await api("POST", `/me/memory-candidates/${c.candidate_id}/accept`, edits);
    if (status === 409 && data.rebased) {
      const box = $(".conflict", node);
      box.hidden = false;
      box.textContent = "The memory changed since this was proposed; the proposal was updated. Review it again.";
      return;
    }
    if (status !== 200) { return fail(data); }
    say("Accepted.");
    await Promise.all([loadCandidates(), loadMemories()]);
  };
  $(".reject", node).onclick = async () => {
    const { status, data } = await api("POST", `/me/memory-candidates/${c.candidate_id}/reject`);
    if (status !== 200) { return fail(data); }
    say("Rejected: it will not be proposed again.");
    await loadCandidates();
  };
  return node;
}

async function loadCandidates() {
  const candidates = await pages("/me/memory-candidates");
  $("#inbox-count").textContent = `(${candidates.length})`;
  $("#inbox").replaceChildren(...candidates.map(renderCandidate));
}

// ---------------------------------------------------------------- settings

async function loadSettings() {
  const { status, data } = await api("GET", "/me/memory-settings");
  if (status !== 200) { return fail(data); }
  for (const name of ["saved_memory_enabled", "auto_extract_enabled"]) {
    const box = $("#" + name);
    box.checked = data[name];
    box.onchange = async () => {
      const result = await api("PATCH", "/me/memory-settings", { [name]: box.checked });
      if (result.status !== 200) { return fail(result.data); }
      say("Settings saved.");
    };
  }
}

// ---------------------------------------------------------------- sign in

function signOut(message) {
  state.token = "";
  sessionStorage.removeItem("memrecall-token");
  $("#main").hidden = true;
  $("#signout").hidden = true;
  $("#token-label").hidden = false;
  $("#signin-button").hidden = false;
  say(message || "Signed out.");
}

async function signIn() {
  const { status } = await api("GET", "/me/memory-settings");
  if (status !== 200) { return; }
  $("#main").hidden = false;
  $("#signout").hidden = false;
  $("#token-label").hidden = true;
  $("#signin-button").hidden = true;
  say("Signed in.");
  await Promise.all([loadSettings(), loadCandidates(), loadMemories()]);
}

$("#signin").onsubmit = async (event) => {
  event.preventDefault();
  state.token = $("#token").value.trim();
  sessionStorage.setItem("memrecall-token", state.token);
  $("#token").value = "";
  await signIn();
};
$("#signout").onclick = () => signOut();
if (state.token) { signIn(); }
