// Cupcake Corner's screens in the browser. Every price, line item and rule comes from the server
// (POST /api/quote); this file only shows them, sends the order and lists orders.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const statusNames = { placed: "Placed", baking: "Baking", out_for_delivery: "Out for delivery",
    delivered: "Delivered", cancelled: "Cancelled" };
  const screens = ["order", "delivery", "checkout", "orders", "kitchen"];
  const addressKey = "cupcake.address";
  const apiKeyKey = "cupcake.apiKey";
  const requestTimeoutMs = 15000;

  // The order, in the app's wire keys; the address comes back from the last visit.
  const order = {
    type: 0, quantity: 3, specialRequestEnabled: false, extraFrosting: false, addSprinkles: false,
    name: "", streetAddress: "", city: "", zip: "",
  };
  try {
    const saved = JSON.parse(localStorage.getItem(addressKey) || "{}");
    for (const field of ["name", "streetAddress", "city", "zip"]) {
      if (typeof saved[field] === "string") order[field] = saved[field];
    }
  } catch (_) { /* a damaged saved address is simply not used */ }

  let quote = null;          // the server's last answer for `order`
  let quoteSequence = 0;     // answers to older requests are ignored
  let pending = null;        // { body, key }: the order being placed and its Idempotency-Key
  let placing = false;

  // ---- the server -------------------------------------------------------------------------

  function apiKey() { return sessionStorage.getItem(apiKeyKey) || ""; }

  // fetch with our headers and a deadline; resolves to { response, body } or throws an Error
  // whose message is meant for a person.
  async function call(method, path, body, extraHeaders) {
    const headers = Object.assign({ Accept: "application/json" }, extraHeaders || {});
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (apiKey()) headers["x-api-key"] = apiKey();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), requestTimeoutMs);
    let response;
    try {
      response = await fetch(path, {
        method, headers, body: body === undefined ? undefined : JSON.stringify(body),
        signal: controller.signal, cache: "no-store", credentials: "omit",
      });
    } catch (error) {
      throw new Error(error.name === "AbortError"
        ? "The shop did not answer in time. Try again: your order will not be placed twice."
        : "The shop is unreachable. Check your connection and try again.");
    } finally {
      clearTimeout(timer);
    }
    let parsed = null;
    const text = await response.text().catch(() => "");
    if (text) { try { parsed = JSON.parse(text); } catch (_) { parsed = null; } }
    return { response, body: parsed };
  }

  // What a problem+json answer says, in words.
  function problemText(status, problem) {
    const fieldNames = { type: "Cake type", quantity: "Number of cakes", name: "Name",
      streetAddress: "Street Address", city: "City", zip: "Zip" };
    let text = problem && typeof problem.detail === "string" ? problem.detail : `The shop answered ${status}.`;
    if (problem && Array.isArray(problem.errors) && problem.errors.length) {
      text += " " + problem.errors.map((e) => `${fieldNames[e.field] || e.field} ${e.rule}.`).join(" ");
    }
    if (status === 401 || status === 403) text += " Enter a key with the Key button, then try again.";
    return text;
  }

  // ---- the quote --------------------------------------------------------------------------

  let quoteTimer = null;
  function requestQuote() {
    clearTimeout(quoteTimer);
    quoteTimer = setTimeout(fetchQuote, 120);
  }

  async function fetchQuote() {
    const sequence = ++quoteSequence;
    try {
      const { response, body } = await call("POST", "/api/quote", order);
      if (sequence !== quoteSequence) return;
      if (!response.ok || !body) throw new Error(problemText(response.status, body));
      quote = body;
    } catch (error) {
      if (sequence !== quoteSequence) return;
      quote = { failed: error.message };
    }
    renderQuote();
  }

  function renderQuote() {
    const failed = quote && quote.failed;
    const total = quote && quote.total ? `Your total is ${quote.total}` : "";
    $("order-total").textContent = failed ? quote.failed : total;
    $("checkout-total").textContent = failed ? "" : total;
    const body = $("line-items").tBodies[0];
    body.replaceChildren();
    for (const line of (quote && quote.lineItems) || []) {
      const row = body.insertRow();
      row.insertCell().textContent = line.description;
      const amount = row.insertCell();
      amount.textContent = line.amount;
      amount.className = "amount";
    }
    const errors = (quote && quote.errors) || [];
    const addressErrors = errors.filter((e) => ["name", "streetAddress", "city", "zip"].includes(e.field));
    const labels = { name: "Name", streetAddress: "Street Address", city: "City", zip: "Zip" };
    const typed = ["name", "streetAddress", "city", "zip"].some((f) => order[f].length > 0);
    $("delivery-problems").textContent = typed
      ? addressErrors.map((e) => `${labels[e.field]} ${e.rule}.`).join(" ") : "";
    $("to-checkout").disabled = !quote || failed || !quote.valid;
    $("checkout-problems").textContent = failed ? quote.failed
      : errors.map((e) => `${labels[e.field] || e.field} ${e.rule}.`).join(" ");
    $("place-order").disabled = placing || !quote || failed || !quote.valid;
  }

  // ---- the order screen -------------------------------------------------------------------

  function showOrder() {
    $("cake-type").value = String(order.type);
    $("quantity").value = String(order.quantity);
    $("quantity-value").textContent = String(order.quantity);
    $("quantity-down").disabled = order.quantity <= 3;
    $("quantity-up").disabled = order.quantity >= 20;
    $("special").checked = order.specialRequestEnabled;
    $("extras").hidden = !order.specialRequestEnabled;
    $("frosting").checked = order.extraFrosting;
    $("sprinkles").checked = order.addSprinkles;
    $("name").value = order.name;
    $("street").value = order.streetAddress;
    $("city").value = order.city;
    $("zip").value = order.zip;
  }

  function changed() {
    showOrder();
    requestQuote();
  }

  function setQuantity(value) {
    if (!Number.isInteger(value)) return;
    order.quantity = Math.min(20, Math.max(3, value));
    changed();
  }

  $("cake-type").addEventListener("change", () => { order.type = Number($("cake-type").value); changed(); });
  $("quantity-down").addEventListener("click", () => setQuantity(order.quantity - 1));
  $("quantity-up").addEventListener("click", () => setQuantity(order.quantity + 1));
  $("quantity").addEventListener("change", () => {
    const value = Number.parseInt($("quantity").value, 10);
    if (Number.isNaN(value)) { showOrder(); return; }
    setQuantity(value);
  });
  $("special").addEventListener("change", () => {
    order.specialRequestEnabled = $("special").checked;
    // The app's reset rule: turning special requests off clears both extras.
    if (!order.specialRequestEnabled) { order.extraFrosting = false; order.addSprinkles = false; }
    changed();
  });
  $("frosting").addEventListener("change", () => { order.extraFrosting = $("frosting").checked; changed(); });
  $("sprinkles").addEventListener("change", () => { order.addSprinkles = $("sprinkles").checked; changed(); });
  $("order-form").addEventListener("submit", (event) => { event.preventDefault(); go("delivery"); });

  // ---- delivery ---------------------------------------------------------------------------

  for (const [id, field] of [["name", "name"], ["street", "streetAddress"], ["city", "city"], ["zip", "zip"]]) {
    $(id).addEventListener("input", () => {
      order[field] = $(id).value;
      localStorage.setItem(addressKey, JSON.stringify({
        name: order.name, streetAddress: order.streetAddress, city: order.city, zip: order.zip,
      }));
      requestQuote();
    });
  }
  $("delivery-form").addEventListener("submit", (event) => {
    event.preventDefault();
    if (!$("to-checkout").disabled) go("checkout");
  });

  // ---- check out --------------------------------------------------------------------------

  function showResult(title, message) {
    $("result-title").textContent = title;
    $("result-message").textContent = message;
    $("result-dialog").showModal();
    $("result-ok").focus();
  }
  $("result-ok").addEventListener("click", () => $("result-dialog").close());

  $("place-order").addEventListener("click", async () => {
    if (placing) return;
    const body = JSON.stringify(order);
    // A retry of the same order reuses its key, so it is placed once however often it is sent.
    if (!pending || pending.body !== body) pending = { body, key: crypto.randomUUID() };
    placing = true;
    const button = $("place-order");
    button.disabled = true;
    button.setAttribute("aria-busy", "true");
    button.textContent = "Placing order…";
    try {
      const { response, body: answer } = await call("POST", "/api/cupcakes", JSON.parse(pending.body),
        { "Idempotency-Key": pending.key });
      if (response.status === 201 && answer) {
        pending = null;
        if (answer.id && answer.receiptToken) startTracking(answer.id, answer.receiptToken);
        showResult("Thank you!", answer.message || "Your order is on its way!");
      } else {
        // 4xx other than a conflict: that order will never go through; a new one gets a new key.
        if (response.status >= 400 && response.status < 500 && ![408, 409, 429].includes(response.status)) {
          pending = null;
        }
        showResult("Checkout failed", problemText(response.status, answer));
      }
    } catch (error) {
      showResult("Checkout failed", error.message);
    } finally {
      placing = false;
      button.removeAttribute("aria-busy");
      button.textContent = "Place Order";
      renderQuote();
    }
  });

  // ---- event streams ---------------------------------------------------------------------------

  // Reads a Server-Sent Events stream with fetch (EventSource cannot send the key or an order's
  // token), handing each event's data to `onEvent` while `wanted()` holds, and resuming after
  // the last event seen (Last-Event-ID) when it breaks, waiting 1, 2, 4, then 5 s. When the
  // server ends it, `resumeAtEnd` says whether to reconnect (the staff feed, after a restart) or
  // stop (one order's stream, which the server ends after the final status); a 404 calls `onGone`.
  async function streamEvents(path, extraHeaders, wanted, onEvent, { onGone = () => {}, resumeAtEnd = false } = {}) {
    let lastId = null;
    let failures = 0;
    while (wanted()) {
      try {
        const headers = Object.assign({ Accept: "text/event-stream" }, extraHeaders);
        if (apiKey()) headers["x-api-key"] = apiKey();
        if (lastId) headers["Last-Event-ID"] = lastId;
        const response = await fetch(path, { headers, cache: "no-store", credentials: "omit" });
        if (response.status === 404) { onGone(); return; }
        if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        let buffer = "";
        failures = 0;
        for (;;) {
          const { value, done } = await reader.read();
          if (!wanted()) { reader.cancel(); return; }
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let end;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            let id = null;
            let data = "";
            for (const line of block.split("\n")) {
              if (line.startsWith("id: ")) id = line.slice(4);
              else if (line.startsWith("data: ")) data += line.slice(6);
            }
            if (!data) continue;
            if (id) lastId = id;
            try { await onEvent(JSON.parse(data)); } catch (_) { /* a message not understood is skipped */ }
          }
        }
        if (!resumeAtEnd) return;
      } catch (_) {
        failures += 1;
        await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 500 * 2 ** failures)));
      }
    }
  }

  // ---- the customer's order, live ----------------------------------------------------------

  // The last order placed from this tab, followed through its event stream (fetch, not
  // EventSource, which cannot send the key and the order's token), resuming after the last
  // event seen when the stream breaks.
  const trackingKey = "cupcake.tracking";
  let tracking = null;       // { id, token }
  let trackingRun = 0;       // a newer order ends the following of an older one

  function startTracking(id, token) {
    tracking = { id, token };
    sessionStorage.setItem(trackingKey, JSON.stringify(tracking));
    showTracking("placed");
    follow(++trackingRun);
  }

  function showTracking(status, reason) {
    $("tracking").hidden = false;
    const name = statusNames[status] || status;
    $("tracking-status").textContent = `Order ${tracking.id}: ${name}${reason ? ` (${reason})` : ""}`;
    $("tracking-cancel").hidden = status !== "placed";
  }

  function follow(run) {
    const path = `/api/cupcakes/${encodeURIComponent(tracking.id)}/events`;
    return streamEvents(path, { "Order-Token": tracking.token }, () => tracking && run === trackingRun,
      (event) => showTracking(event.status, event.reason), { onGone: () => { $("tracking").hidden = true; } });
  }

  $("tracking-cancel").addEventListener("click", async () => {
    if (!tracking) return;
    try {
      const { response, body } = await call("DELETE", `/api/cupcakes/${encodeURIComponent(tracking.id)}`,
        undefined, { "Order-Token": tracking.token });
      if (!response.ok) showResult("Not cancelled", problemText(response.status, body));
    } catch (error) {
      showResult("Not cancelled", error.message);
    }
  });

  try {
    const saved = JSON.parse(sessionStorage.getItem(trackingKey) || "null");
    if (saved && typeof saved.id === "string" && typeof saved.token === "string") {
      tracking = saved;
      showTracking("placed");
      follow(++trackingRun);
    }
  } catch (_) { /* nothing to follow */ }

  // ---- orders -----------------------------------------------------------------------------

  const list = { page: 1, totalPages: 0 };
  const typeNames = ["vanilla", "strawberry", "chocolate", "rainbow"];
  let listSequence = 0;
  let searchTimer = null;

  function dollars(cents) {
    if (!Number.isInteger(cents)) return "—";
    return `$${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;
  }
  function orMissing(value) {
    return typeof value === "string" && value.trim() ? value : "—";
  }

  async function loadOrders() {
    const sequence = ++listSequence;
    const parameters = new URLSearchParams({ page: String(list.page), per_page: "10", sort: $("sort").value });
    if ($("favourites-only").checked) parameters.set("favorite", "true");
    if ($("search").value.trim()) parameters.set("name_prefix", $("search").value.trim());
    $("orders-table").setAttribute("aria-busy", "true");
    let result;
    try {
      result = await call("GET", `/api/cupcakes?${parameters}`);
    } catch (error) {
      if (sequence === listSequence) showList([], error.message);
      return;
    } finally {
      if (sequence === listSequence) $("orders-table").removeAttribute("aria-busy");
    }
    if (sequence !== listSequence) return;
    const { response, body } = result;
    if (!response.ok || !body || !Array.isArray(body.data)) {
      showList([], problemText(response.status, body));
      return;
    }
    list.totalPages = body.total_pages;
    if (list.page > 1 && body.data.length === 0 && body.total > 0) {
      list.page = Math.max(1, body.total_pages);
      loadOrders();
      return;
    }
    const filtered = $("favourites-only").checked || $("search").value.trim();
    showList(body.data, body.total === 0
      ? (filtered ? "No orders match." : "No orders yet.")
      : `${body.total} ${body.total === 1 ? "order" : "orders"}`);
  }

  function showList(orders, status) {
    $("orders-status").textContent = status;
    const body = $("orders-table").tBodies[0];
    body.replaceChildren();
    for (const item of orders) {
      const row = body.insertRow();
      row.dataset.id = item.id;
      const star = document.createElement("button");
      star.type = "button";
      star.className = "star";
      star.textContent = item.isFavorite ? "★" : "☆";
      star.setAttribute("aria-pressed", item.isFavorite ? "true" : "false");
      star.setAttribute("aria-label", `Favourite order ${item.id}`);
      star.addEventListener("click", () => favourite(item.id, !item.isFavorite));
      row.insertCell().append(star);
      row.insertCell().textContent = item.id;
      row.insertCell().textContent = orMissing(item.name);
      const kind = typeNames[item.type];
      row.insertCell().textContent = Number.isInteger(item.quantity) && kind ? `${item.quantity} × ${kind}` : "—";
      const total = row.insertCell();
      total.textContent = dollars(item.costCents);
      total.className = "amount";
      row.insertCell().textContent = item.createdAt ? new Date(item.createdAt).toLocaleString() : "—";
      row.insertCell().textContent = statusNames[item.status] || orMissing(item.status);
      const actions = row.insertCell();
      // Cancelling from here is for orders not started yet; one the kitchen has started needs a
      // reason, given with `cupcake orders cancel --reason`.
      if (item.status !== undefined && item.status !== "placed") continue;
      const cancel = document.createElement("button");
      cancel.type = "button";
      cancel.className = "danger";
      cancel.textContent = "Cancel";
      cancel.setAttribute("aria-label", `Cancel order ${item.id}`);
      cancel.addEventListener("click", () => confirmCancel(item));
      actions.append(cancel);
    }
    $("page-label").textContent = list.totalPages > 0 ? `Page ${list.page} of ${list.totalPages}` : "";
    $("previous-page").disabled = list.page <= 1;
    $("next-page").disabled = list.page >= list.totalPages;
  }

  async function favourite(id, isFavorite) {
    try {
      const { response, body } = await call("PATCH", `/api/cupcakes/${id}`, { isFavorite });
      if (!response.ok) showResult("Not changed", problemText(response.status, body));
    } catch (error) {
      showResult("Not changed", error.message);
    }
    loadOrders();
  }

  let cancelling = null;
  function confirmCancel(item) {
    cancelling = item;
    $("confirm-message").textContent =
      `Order ${item.id} for ${orMissing(item.name)} will be cancelled. This cannot be undone.`;
    $("confirm-dialog").showModal();
    $("confirm-keep").focus();
  }
  $("confirm-keep").addEventListener("click", () => { cancelling = null; $("confirm-dialog").close(); });
  $("confirm-cancel").addEventListener("click", async () => {
    const item = cancelling;
    cancelling = null;
    $("confirm-dialog").close();
    if (!item) return;
    try {
      const { response, body } = await call("DELETE", `/api/cupcakes/${item.id}`);
      if (!response.ok && response.status !== 404) showResult("Not cancelled", problemText(response.status, body));
    } catch (error) {
      showResult("Not cancelled", error.message);
    }
    loadOrders();
  });

  $("favourites-only").addEventListener("change", () => { list.page = 1; loadOrders(); });
  $("sort").addEventListener("change", () => { list.page = 1; loadOrders(); });
  $("search").addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => { list.page = 1; loadOrders(); }, 150);
  });
  $("previous-page").addEventListener("click", () => { if (list.page > 1) { list.page -= 1; loadOrders(); } });
  $("next-page").addEventListener("click", () => {
    if (list.page < list.totalPages) { list.page += 1; loadOrders(); }
  });

  // ---- the key ----------------------------------------------------------------------------

  $("key-button").addEventListener("click", () => {
    $("key-input").value = apiKey();
    $("key-dialog").showModal();
    $("key-input").focus();
  });
  function closeKeyDialog() {
    $("key-dialog").close();
    requestQuote();
    if (current === "orders") loadOrders();
  }
  $("key-save").addEventListener("click", () => {
    const key = $("key-input").value.trim();
    if (key) sessionStorage.setItem(apiKeyKey, key); else sessionStorage.removeItem(apiKeyKey);
    closeKeyDialog();
  });
  $("key-forget").addEventListener("click", () => { sessionStorage.removeItem(apiKeyKey); closeKeyDialog(); });
  $("key-input").addEventListener("keydown", (event) => {
    if (event.key === "Enter") { event.preventDefault(); $("key-save").click(); }
  });

  // ---- the kitchen board (staff) ------------------------------------------------------------

  // A column per open status and a card per order, kept live by the stream of every order's
  // events; a move is sent with the card's version (If-Match), so a move another board made
  // first is never overwritten: the card says "changed elsewhere" and shows the order as it is.
  const openStatuses = ["placed", "baking", "out_for_delivery"];
  const nextStatus = { placed: "baking", baking: "out_for_delivery", out_for_delivery: "delivered" };
  const cards = new Map();   // id → { order, element, note }
  let kitchenRun = 0;
  let waitedTimer = null;

  function closeKitchen() {
    kitchenRun += 1;
    clearInterval(waitedTimer);
    waitedTimer = null;
  }

  async function openKitchen() {
    const run = ++kitchenRun;
    cards.clear();
    for (const status of openStatuses) $(`column-${status}`).replaceChildren();
    $("kitchen-status").textContent = "Loading…";
    let path = "/api/cupcakes?status=placed,baking,out_for_delivery&sort=createdAt&per_page=100";
    try {
      for (let page = 0; page < 20 && path; page += 1) {
        const { response, body } = await call("GET", path);
        if (run !== kitchenRun) return;
        if (!response.ok || !body) {
          $("kitchen-status").textContent = problemText(response.status, body);
          return;
        }
        for (const order of body.data || []) putCard(order);
        path = body.next_cursor ? `/api/cupcakes?cursor=${encodeURIComponent(body.next_cursor)}` : null;
      }
    } catch (error) {
      $("kitchen-status").textContent = error.message;
      return;
    }
    showKitchenCount();
    showWebhooks(run);
    waitedTimer = setInterval(() => {
      for (const card of cards.values()) renderCard(card);
      showWebhooks(run);
    }, 30000);
    followKitchen(run);
  }

  // The board's settings: each webhook endpoint with its health (healthy, failing since when,
  // or disabled and why), and a button to enable a disabled one again.
  async function showWebhooks(run) {
    let answer;
    try {
      answer = await call("GET", "/api/webhook-endpoints");
    } catch (error) {
      $("webhooks-status").textContent = error.message;
      return;
    }
    if (run !== kitchenRun) return;
    const { response, body } = answer;
    if (!response.ok || !body) {
      $("webhooks-status").textContent = problemText(response.status, body);
      return;
    }
    const endpoints = body.data || [];
    $("webhooks-status").textContent = endpoints.length === 0
      ? "No webhooks: the shop tells no other system (add one with cupcake webhooks add URL)."
      : `${endpoints.length} ${endpoints.length === 1 ? "webhook" : "webhooks"}`;
    $("webhooks").replaceChildren(...endpoints.map((endpoint) => {
      const item = document.createElement("li");
      item.className = "endpoint";
      const url = document.createElement("p");
      url.textContent = `${endpoint.url} (${endpoint.eventTypes.join(", ")})`;
      const health = document.createElement("p");
      health.className = "health";
      if (!endpoint.enabled) {
        health.textContent = `Disabled: ${endpoint.disabledReason || "by the staff"}`;
        health.classList.add("bad");
      } else if (endpoint.failingSince) {
        health.textContent = `Failing since ${new Date(endpoint.failingSince).toLocaleString()}`;
        health.classList.add("bad");
      } else {
        health.textContent = "Healthy";
      }
      item.append(url, health);
      if (!endpoint.enabled) {
        const enable = document.createElement("button");
        enable.type = "button";
        enable.textContent = "Enable again";
        enable.setAttribute("aria-label", `Enable the webhook to ${endpoint.url} again`);
        enable.addEventListener("click", async () => {
          enable.disabled = true;
          try {
            const { response: changed, body: problem } = await call(
              "PATCH", `/api/webhook-endpoints/${encodeURIComponent(endpoint.id)}`, { enabled: true });
            if (!changed.ok) $("webhooks-status").textContent = problemText(changed.status, problem);
          } catch (error) {
            $("webhooks-status").textContent = error.message;
          }
          showWebhooks(run);
        });
        item.append(enable);
      }
      return item;
    }));
  }

  function showKitchenCount() {
    const open = cards.size;
    $("kitchen-status").textContent = open === 0 ? "No open orders." : `${open} open ${open === 1 ? "order" : "orders"}`;
  }

  function waited(order) {
    const since = Date.parse(order.createdAt);
    if (Number.isNaN(since)) return "—";
    const minutes = Math.max(0, Math.floor((Date.now() - since) / 60000));
    return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  }

  function putCard(order) {
    const id = String(order.id);
    if (!openStatuses.includes(order.status)) {
      const gone = cards.get(id);
      if (gone) { gone.element.remove(); cards.delete(id); }
      return;
    }
    let card = cards.get(id);
    if (!card) {
      const element = document.createElement("li");
      element.className = "card";
      element.dataset.id = id;
      card = { order, element, note: "" };
      cards.set(id, card);
    }
    card.order = order;
    // The version the board last saw, on the card itself: what its next move is sent with.
    card.element.dataset.version = String(order.version);
    renderCard(card);
    const column = $(`column-${order.status}`);
    if (card.element.parentElement !== column) {
      // Oldest first within a column: by id, which is placement order.
      const after = [...column.children].find((other) => Number(other.dataset.id) > Number(id));
      column.insertBefore(card.element, after || null);
    }
  }

  function renderCard(card) {
    const order = card.order;
    const kind = typeNames[order.type];
    const extras = [];
    if (order.extraFrosting) extras.push("extra frosting");
    if (order.addSprinkles) extras.push("sprinkles");
    const title = document.createElement("h3");
    title.textContent = `Order ${order.id} · ${orMissing(order.name)}`;
    const cakes = document.createElement("p");
    cakes.textContent = `${Number.isInteger(order.quantity) && kind ? `${order.quantity} × ${kind}` : "—"}` +
      (extras.length ? `, ${extras.join(" and ")}` : "") +
      (order.specialRequestEnabled && !extras.length ? ", special requests" : "");
    const wait = document.createElement("p");
    wait.textContent = `Waiting ${waited(order)}`;
    const parts = [title, cakes, wait];
    if (card.note) {
      const note = document.createElement("p");
      note.className = "note";
      note.setAttribute("role", "status");
      note.textContent = card.note;
      parts.push(note);
    }
    const next = nextStatus[order.status];
    if (next) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = `Move to ${statusNames[next]}`;
      button.setAttribute("aria-label", `Move order ${order.id} to ${statusNames[next]}`);
      button.addEventListener("click", () => moveCard(card, next));
      parts.push(button);
    }
    card.element.replaceChildren(...parts);
  }

  async function moveCard(card, status) {
    const id = String(card.order.id);
    try {
      const { response, body } = await call("PATCH", `/api/cupcakes/${encodeURIComponent(id)}`, { status },
        { "If-Match": `"v${card.element.dataset.version}"` });
      if (response.ok && body && body.data) {
        card.note = "";
        putCard(body.data);
        showKitchenCount();
        return;
      }
      if (response.status === 412 || response.status === 409) {
        // Someone moved it first: show it as it is now, and say so.
        const current = await call("GET", `/api/cupcakes/${encodeURIComponent(id)}`);
        card.note = `Changed elsewhere: it is ${statusNames[current.body?.data?.status] || "changed"} now.`;
        if (current.body && current.body.data) putCard(current.body.data); else renderCard(card);
        const still = cards.get(id);
        if (!still) showResult("Changed elsewhere", `Order ${id} was moved on elsewhere.`);
        showKitchenCount();
        return;
      }
      showResult("Not moved", problemText(response.status, body));
    } catch (error) {
      showResult("Not moved", error.message);
    }
  }

  // Every order's events, from when the board loaded, resumed after the last one seen.
  function followKitchen(run) {
    return streamEvents("/api/events/stream", {}, () => run === kitchenRun, kitchenEvent, { resumeAtEnd: true });
  }

  async function kitchenEvent(event) {
    const id = String(event.orderId);
    const card = cards.get(id);
    if (card && card.order.version >= event.version) return;  // already shown
    if (card && event.status !== "placed") {
      putCard(Object.assign({}, card.order, { status: event.status, version: event.version }));
    } else if (openStatuses.includes(event.status)) {
      // A new order (or one not on the board yet): its details come from the order itself.
      const { response, body } = await call("GET", `/api/cupcakes/${encodeURIComponent(id)}`);
      if (response.ok && body && body.data) putCard(body.data);
    } else if (card) {
      putCard(Object.assign({}, card.order, { status: event.status, version: event.version }));
    }
    showKitchenCount();
  }

  // ---- screens: the URL's fragment says which ---------------------------------------------

  let current = null;
  function go(screen) { location.hash = screen; }

  function route() {
    const wanted = location.hash.replace(/^#/, "");
    const screen = screens.includes(wanted) ? wanted : "order";
    for (const name of screens) $(`screen-${name}`).hidden = name !== screen;
    for (const name of ["order", "orders", "kitchen"]) {
      const link = $(`nav-${name}`);
      if (name === screen) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
    }
    const first = current === null;
    current = screen;
    document.title = { order: "Cupcake Corner", delivery: "Delivery details · Cupcake Corner",
      checkout: "Check out · Cupcake Corner", orders: "Orders · Cupcake Corner",
      kitchen: "Kitchen · Cupcake Corner" }[screen];
    if (screen === "orders") loadOrders();
    if (screen === "kitchen") openKitchen(); else closeKitchen();
    if (!first) $(`screen-${screen}`).querySelector("h1").focus();
  }

  window.addEventListener("hashchange", route);
  showOrder();
  route();
  fetchQuote();
})();
