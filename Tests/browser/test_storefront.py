"""The storefront in a real browser: headless Chromium driven by Selenium against a real
`cupcake serve` on a free loopback port, started and stopped by each test. Controls are found by
their labels, as a person finds them. Run by scripts/browser (and so by scripts/test)."""

import json
import os
import re
import socket
import sqlite3
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.request

from axe_selenium_python import Axe
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

CUPCAKE = os.environ.get("CUPCAKE_BIN", ".build/debug/cupcake")
SCREENSHOTS = os.environ.get("CUPCAKE_SCREENSHOTS") or tempfile.mkdtemp(prefix="cupcake-screens-")
os.makedirs(SCREENSHOTS, exist_ok=True)
PHONE = (390, 844)
DESKTOP = (1280, 900)
TABLET = (820, 1180)
WAIT = 10  # seconds any one condition may take


class Server:
    """`cupcake serve` on 127.0.0.1, a free port (--port 0, read from its startup line)."""

    def __init__(self, *arguments, database=None, port=0):
        self.database = database or os.path.join(tempfile.mkdtemp(prefix="cupcake-browser-"), "orders.sqlite")
        self.process = subprocess.Popen(
            [CUPCAKE, "serve", "--host", "127.0.0.1", "--port", str(port), "--no-pin-threads", "--quiet",
             "--database", self.database, *arguments],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        deadline = time.time() + 20
        self.url = None
        while time.time() < deadline and self.url is None:
            line = self.process.stderr.readline()
            if not line:
                break
            match = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
            if match:
                self.url = match.group(1)
        if self.url is None:
            self.stop()
            raise RuntimeError("cupcake serve did not start")

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if not self.process.stderr.closed:
            self.process.stderr.close()

    def api(self, method, path, body=None, key=None, headers=None):
        """(status, headers, parsed JSON or None)."""
        request = urllib.request.Request(self.url + path, method=method)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            request.add_header("Content-Type", "application/json")
        if key:
            request.add_header("x-api-key", key)
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, data=data, timeout=10) as response:
                text = response.read()
                return response.status, response.headers, (json.loads(text) if text and response.headers.get(
                    "Content-Type", "").startswith("application/json") else text)
        except urllib.error.HTTPError as error:
            text = error.read()
            return error.code, error.headers, (json.loads(text) if text else None)


def chromium(size):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--no-first-run", "--disable-extensions", f"--window-size={size[0]},{size[1]}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))


class StorefrontTest(unittest.TestCase):
    server_arguments = ()
    size = DESKTOP

    def setUp(self):
        self.server = Server(*self.server_arguments)
        self.addCleanup(self.server.stop)
        self.driver = chromium(self.size)
        self.addCleanup(self.driver.quit)
        self.driver.set_page_load_timeout(WAIT * 2)

    # ---- finding things as a person does --------------------------------------------------

    def wait(self, condition, message):
        try:
            # A list redrawn between finding an element and reading it: look again.
            return WebDriverWait(self.driver, WAIT, poll_frequency=0.05,
                                 ignored_exceptions=(StaleElementReferenceException,)).until(
                lambda _: condition(), message)
        except TimeoutException:
            self.fail(message)

    def control(self, label):
        """The control a visible <label> names (its text begins with `label`)."""
        for element in self.driver.find_elements(By.TAG_NAME, "label"):
            if element.is_displayed() and element.text.strip().startswith(label):
                return self.driver.find_element(By.ID, element.get_attribute("for"))
        self.fail(f"no visible label '{label}'")

    def button(self, name):
        """A visible button by its text or accessible label."""
        for element in self.driver.find_elements(By.TAG_NAME, "button"):
            if element.is_displayed() and name in (element.text.strip(), element.get_attribute("aria-label")):
                return element
        self.fail(f"no visible button '{name}'")

    def heading(self):
        return next(h.text for h in self.driver.find_elements(By.TAG_NAME, "h1") if h.is_displayed())

    def text_of(self, element_id):
        return self.driver.find_element(By.ID, element_id).text

    def open(self, fragment=""):
        self.driver.get(self.server.url + "/" + fragment)
        self.wait(lambda: self.driver.execute_script("return document.readyState") == "complete", "page loaded")

    def dialog(self):
        """(title, message) of the open dialog, once one is open."""
        self.wait(lambda: self.driver.execute_script(
            "return [...document.querySelectorAll('dialog')].some(d => d.open)"), "a dialog opens")
        return self.driver.execute_script(
            "const d = [...document.querySelectorAll('dialog')].find(d => d.open);"
            "return [d.querySelector('h2').textContent, d.querySelector('p').textContent];")

    def choose_order(self, cake="Chocolate", quantity=5, frosting=True, sprinkles=False):
        Select(self.control("Select your cake type")).select_by_visible_text(cake)
        for _ in range(40):
            current = int(self.control("Number of cakes").get_attribute("value"))
            if current == quantity:
                break
            self.button("One cake more" if current < quantity else "One cake fewer").click()
        if frosting or sprinkles:
            self.control("Any special requests?").click()
            if frosting:
                self.control("Add extra frosting").click()
            if sprinkles:
                self.control("Add extra sprinkles").click()

    def fill_address(self, name="Taylor Swift", street="1 Main St", city="Nashville", zip_code="37201"):
        for label, value in (("Name", name), ("Street Address", street), ("City", city), ("Zip", zip_code)):
            field = self.control(label)
            field.clear()
            field.send_keys(value)

    def to_checkout(self, cake, quantity, total, frosting=False):
        """Chooses an order, gives the address and arrives at the checkout screen showing `total`."""
        self.open()
        self.choose_order(cake, quantity, frosting=frosting)
        self.button("Delivery details").click()
        self.fill_address()
        self.wait(lambda: self.button("Check out").is_enabled(), "Check out enabled for a full address")
        self.button("Check out").click()
        self.wait(lambda: self.text_of("checkout-total") == f"Your total is {total}", f"the checkout total {total}")

    def screenshot(self, name):
        path = os.path.join(SCREENSHOTS, f"{name}.png")
        self.driver.save_screenshot(path)
        return path


class OrderFlowTests(StorefrontTest):
    def test_a_full_order_through_the_three_screens_is_stored_with_the_same_price(self):
        self.open()
        self.assertEqual(self.heading(), "Cupcake Corner")
        self.choose_order("Chocolate", 5, frosting=True)
        self.assertEqual(self.driver.find_element(By.ID, "quantity-label").text, "Number of cakes: 5")
        self.wait(lambda: self.text_of("order-total") == "Your total is $16.00", "the order screen shows $16.00")
        self.button("Delivery details").click()
        self.wait(lambda: self.heading() == "Delivery details", "the delivery screen")
        self.assertTrue(self.driver.current_url.endswith("#delivery"))
        self.fill_address()
        self.wait(lambda: self.button("Check out").is_enabled(), "Check out enabled for a full address")
        self.button("Check out").click()
        self.wait(lambda: self.heading() == "Check out", "the checkout screen")
        self.wait(lambda: self.text_of("checkout-total") == "Your total is $16.00", "the checkout total")
        lines = [row.text for row in self.driver.find_elements(By.CSS_SELECTOR, "#line-items tbody tr")]
        self.assertEqual(lines, ["5 × chocolate cake at $2.00 $10.00", "Chocolate surcharge (2 × $0.50, once) $1.00",
                                 "Extra frosting, 5 × $1.00 $5.00"])
        picture = self.driver.find_element(By.CSS_SELECTOR, "#screen-checkout img")
        self.assertTrue(self.driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0",
                                                   picture), "the cupcake picture loads from the server")
        self.button("Place Order").click()
        title, message = self.dialog()
        self.assertEqual(title, "Thank you!")
        self.assertEqual(message, "Your order for 5x chocolate cupcakes is on its way!")
        self.button("OK").click()
        status, _, listed = self.server.api("GET", "/api/cupcakes")
        self.assertEqual(status, 200)
        self.assertEqual(listed["total"], 1)
        stored = listed["data"][0]
        self.assertEqual((stored["costCents"], stored["name"], stored["type"], stored["quantity"]),
                         (1600, "Taylor Swift", 2, 5))
        # Back and forward move between the screens, and the URL says which.
        self.driver.back()
        self.wait(lambda: self.heading() == "Delivery details", "back to the delivery screen")
        self.driver.back()
        self.wait(lambda: self.heading() == "Cupcake Corner", "back to the order screen")
        self.driver.forward()
        self.wait(lambda: self.heading() == "Delivery details", "forward to the delivery screen")

    def test_the_address_is_remembered_for_next_time(self):
        self.open("#delivery")
        self.fill_address(name="Ann Lee", street="2 Elm St", city="Austin", zip_code="73301")
        self.driver.refresh()
        self.wait(lambda: self.heading() == "Delivery details", "the delivery screen after a reload")
        self.assertEqual([self.control(label).get_attribute("value") for label in ("Name", "Street Address", "City", "Zip")],
                         ["Ann Lee", "2 Elm St", "Austin", "73301"])

    def test_turning_special_requests_off_clears_both_extras(self):
        self.open()
        self.wait(lambda: self.text_of("order-total") == "Your total is $6.00", "three vanilla: $6.00")
        self.assertTrue(self.control("Select your cake type").is_displayed())
        self.assertEqual(self.driver.find_elements(By.XPATH, "//label[normalize-space()='Add extra frosting']")[0]
                         .is_displayed(), False, "extras hidden until special requests are on")
        self.control("Any special requests?").click()
        self.control("Add extra frosting").click()
        self.control("Add extra sprinkles").click()
        self.wait(lambda: self.text_of("order-total") == "Your total is $10.50", "3 × (2 + 1 + 0.50)")
        self.control("Any special requests?").click()
        self.wait(lambda: self.text_of("order-total") == "Your total is $6.00", "the extras are no longer charged")
        self.control("Any special requests?").click()
        self.assertFalse(self.control("Add extra frosting").is_selected())
        self.assertFalse(self.control("Add extra sprinkles").is_selected())

    def test_the_stepper_stops_at_3_and_20(self):
        self.open()
        self.assertFalse(self.button("One cake fewer").is_enabled())
        for _ in range(17):
            self.button("One cake more").click()
        self.assertEqual(self.driver.find_element(By.ID, "quantity-label").text, "Number of cakes: 20")
        self.assertFalse(self.button("One cake more").is_enabled())
        field = self.control("Number of cakes")
        field.clear()
        field.send_keys("99", Keys.TAB)
        self.wait(lambda: field.get_attribute("value") == "20", "a typed 99 is held at 20")
        self.wait(lambda: self.text_of("order-total") == "Your total is $40.00", "20 vanilla")

    def test_check_out_is_disabled_until_every_field_holds_more_than_whitespace(self):
        self.open("#delivery")
        self.wait(lambda: self.heading() == "Delivery details", "the delivery screen")
        self.assertFalse(self.button("Check out").is_enabled())
        self.fill_address(name="   ", street="1 Main St", city="Nashville", zip_code="37201")
        time.sleep(0.5)  # the quote for this address has come back by now
        self.assertFalse(self.button("Check out").is_enabled(), "a name of spaces is blank")
        self.wait(lambda: "Name must not be blank" in self.text_of("delivery-problems"), "the page says why")
        field = self.control("Name")
        field.send_keys("Bo")
        self.wait(lambda: self.button("Check out").is_enabled(), "enabled once the name is more than whitespace")
        field.clear()
        field.send_keys("\t ")
        self.wait(lambda: not self.button("Check out").is_enabled(), "disabled again for a blank name")

    def test_the_whole_flow_works_with_the_keyboard_alone(self):
        self.open()
        body = self.driver.find_element(By.TAG_NAME, "body")
        body.click()

        def tab_to(element_id):
            for _ in range(40):
                if self.driver.switch_to.active_element.get_attribute("id") == element_id:
                    return self.driver.switch_to.active_element
                self.driver.switch_to.active_element.send_keys(Keys.TAB)
            self.fail(f"Tab never reached #{element_id}")

        tab_to("cake-type").send_keys(Keys.ARROW_DOWN, Keys.ARROW_DOWN)
        tab_to("quantity-up").send_keys(Keys.ENTER)
        self.driver.switch_to.active_element.send_keys(Keys.ENTER)
        tab_to("special").send_keys(Keys.SPACE)
        tab_to("sprinkles").send_keys(Keys.SPACE)
        self.wait(lambda: self.text_of("order-total") == "Your total is $13.50", "5 chocolate with sprinkles")
        tab_to("to-delivery").send_keys(Keys.ENTER)
        self.wait(lambda: self.heading() == "Delivery details", "the delivery screen")
        for element_id, value in (("name", "Kim"), ("street", "3 Oak Ave"), ("city", "Boise"), ("zip", "83702")):
            tab_to(element_id).send_keys(value)
        self.wait(lambda: self.button("Check out").is_enabled(), "Check out enabled")
        tab_to("to-checkout").send_keys(Keys.ENTER)
        self.wait(lambda: self.heading() == "Check out", "the checkout screen")
        tab_to("place-order").send_keys(Keys.ENTER)
        title, message = self.dialog()
        self.assertEqual((title, message), ("Thank you!", "Your order for 5x chocolate cupcakes is on its way!"))
        self.driver.switch_to.active_element.send_keys(Keys.ENTER)  # OK has the focus
        self.wait(lambda: not self.driver.execute_script(
            "return document.getElementById('result-dialog').open"), "Enter on OK closes the dialog")

    def test_every_control_has_a_label(self):
        self.open()
        unnamed = self.driver.execute_script("""
            const named = (e) => (e.labels && e.labels.length) || e.getAttribute('aria-label')
                || (e.tagName === 'BUTTON' && e.textContent.trim());
            return [...document.querySelectorAll('input, select, button')].filter(e => !named(e)).map(e => e.outerHTML);
        """)
        self.assertEqual(unnamed, [])


class LiveStatusTests(StorefrontTest):
    """After checkout the customer sees the order's status change without reloading, and may
    cancel it while it is placed."""

    def place_through_the_page(self):
        self.to_checkout("Chocolate", 5, "$11.00")
        self.button("Place Order").click()
        self.dialog()
        self.button("OK").click()
        self.open("#order")
        self.wait(lambda: self.text_of("tracking-status") == "Order 1: Placed", "the order shows as placed")

    def test_the_customer_follows_the_order_to_delivered_without_reloading(self):
        self.place_through_the_page()
        for status, shown in (("baking", "Baking"), ("out_for_delivery", "Out for delivery"),
                              ("delivered", "Delivered")):
            self.assertEqual(self.server.api("PATCH", "/api/cupcakes/1", {"status": status})[0], 200)
            self.wait(lambda: self.text_of("tracking-status") == f"Order 1: {shown}", f"the page shows {shown}")
            self.assertFalse(bool(self.driver.find_elements(By.CSS_SELECTOR, "#tracking-cancel:not([hidden])")),
                             "no cancelling once the kitchen has it")
        self.screenshot("tracking-delivered")

    def test_the_customer_cancels_while_it_is_placed(self):
        self.place_through_the_page()
        self.button("Cancel this order").click()
        self.wait(lambda: self.text_of("tracking-status") == "Order 1: Cancelled", "the page shows it cancelled")
        status, _, body = self.server.api("GET", "/api/cupcakes/1")
        self.assertEqual(body["data"]["status"], "cancelled")
        self.assertFalse(bool(self.driver.find_elements(By.CSS_SELECTOR, "#tracking-cancel:not([hidden])")))


class FailureTests(StorefrontTest):
    def test_an_unreachable_shop_says_so_in_words(self):
        self.to_checkout("Vanilla", 4, "$8.00")
        self.server.stop()
        self.button("Place Order").click()
        title, message = self.dialog()
        self.assertEqual(title, "Checkout failed")
        self.assertIn("unreachable", message)
        self.assertNotIn("{", message)
        self.button("OK").click()
        self.wait(lambda: self.button("Place Order").is_enabled(), "the button is back for a retry")


class RetryTests(StorefrontTest):
    def sent_keys(self):
        """The Idempotency-Key of every POST /api/cupcakes the browser sent, from its DevTools log."""
        keys = []
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") != "Network.requestWillBeSent":
                continue
            request = message["params"]["request"]
            if request["method"] == "POST" and request["url"].endswith("/api/cupcakes"):
                headers = {name.lower(): value for name, value in request["headers"].items()}
                keys.append(headers.get("idempotency-key"))
        return keys

    def test_a_retry_of_the_same_order_reuses_its_key_and_a_new_order_gets_a_new_one(self):
        port = self.server.url.rsplit(":", 1)[1]
        self.to_checkout("Strawberry", 6, "$12.50")
        self.server.stop()
        self.button("Place Order").click()
        self.assertEqual(self.dialog()[0], "Checkout failed")
        self.button("OK").click()
        # The shop is back on the same address and database: the retry goes through, once.
        self.server = Server(port=port, database=self.server.database)
        self.addCleanup(self.server.stop)
        self.wait(lambda: self.button("Place Order").is_enabled(), "Place Order enabled")
        self.button("Place Order").click()
        self.assertEqual(self.dialog()[0], "Thank you!")
        self.button("OK").click()
        self.button("Place Order").click()  # the same cakes again: a second order
        self.assertEqual(self.dialog()[0], "Thank you!")
        keys = self.sent_keys()
        self.assertEqual(len(keys), 3, keys)
        self.assertTrue(all(keys), keys)
        self.assertEqual(keys[0], keys[1], "the retry reused the failed attempt's key")
        self.assertNotEqual(keys[1], keys[2], "a new order after a placed one gets a new key")
        self.assertEqual(self.server.api("GET", "/api/cupcakes")[2]["total"], 2)


class KitchenTests(StorefrontTest):
    """The kitchen board (#kitchen, staff key): a column per open status, live on two boards
    at once, and a move that lost a race says so."""
    server_arguments = ("--api-key", "app-key-for-the-test", "--staff-key", "staff-key-for-the-test")
    staff = "staff-key-for-the-test"

    def place(self, name, cake_type=2, quantity=5):
        status, _, _ = self.server.api("POST", "/api/cupcakes", {
            "type": cake_type, "quantity": quantity, "specialRequestEnabled": True, "extraFrosting": True,
            "name": name, "streetAddress": "1 Main St", "city": "Nashville", "zip": "37201"}, key=self.staff)
        self.assertEqual(status, 201)

    def open_board(self, driver):
        driver.get(self.server.url + "/")
        driver.execute_script(f"sessionStorage.setItem('cupcake.apiKey', '{self.staff}')")
        driver.get(self.server.url + "/#kitchen")

    def column_of(self, driver, order_id):
        return driver.execute_script(
            "const card = document.querySelector(`#screen-kitchen .card[data-id='${arguments[0]}']`);"
            "return card ? card.parentElement.id : null;", str(order_id))

    def test_two_boards_see_each_others_moves_and_new_orders(self):
        self.place("Ann Lee")
        self.place("Bob Stone", 0, 3)
        other = chromium(DESKTOP)
        self.addCleanup(other.quit)
        self.open_board(self.driver)
        self.open_board(other)
        for driver in (self.driver, other):
            self.wait(lambda: self.column_of(driver, 1) == "column-placed" and self.column_of(driver, 2)
                      == "column-placed", "both orders placed on both boards")
        self.assertIn("5 × chocolate, extra frosting", self.driver.find_element(
            By.CSS_SELECTOR, "#screen-kitchen .card[data-id='1']").text)
        self.button("Move order 1 to Baking").click()
        self.wait(lambda: self.column_of(other, 1) == "column-baking", "the other board sees the move")
        self.place("Cy Young", 3, 4)
        for driver in (self.driver, other):
            self.wait(lambda: self.column_of(driver, 3) == "column-placed", "a new order appears on both boards")
        # Keyboard only: Tab to the next Move button and press Enter.
        button = other.find_element(By.CSS_SELECTOR, "#screen-kitchen .card[data-id='1'] button")
        button.send_keys(Keys.ENTER)
        self.wait(lambda: self.column_of(self.driver, 1) == "column-out_for_delivery", "the keyboard's move shows")
        self.screenshot("kitchen-desktop")
        self.driver.set_window_size(*TABLET)
        self.screenshot("kitchen-tablet")
        self.driver.set_window_size(*PHONE)
        overflow = self.driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        self.assertLessEqual(overflow, 0, "the board fits a phone")
        self.screenshot("kitchen-phone")

    def test_each_card_offers_exactly_the_next_step_the_rules_allow(self):
        # One order at each status; the board offers the staff's one step forward, as the rules
        # (StatusMove) allow, and shows no final order.
        paths = {"placed": [], "baking": ["baking"], "out_for_delivery": ["baking", "out_for_delivery"],
                 "delivered": ["baking", "out_for_delivery", "delivered"], "cancelled": ["cancelled"]}
        offered = {"placed": ["Move to Baking"], "baking": ["Move to Out for delivery"],
                   "out_for_delivery": ["Move to Delivered"]}
        for number, (status, path) in enumerate(paths.items(), start=1):
            self.place(f"Customer {number}")
            for step in path:
                self.assertEqual(self.server.api("PATCH", f"/api/cupcakes/{number}", {"status": step},
                                                 key=self.staff)[0], 200)
        self.open_board(self.driver)
        self.wait(lambda: "3 open orders" == self.text_of("kitchen-status"), "three open orders")
        for number, status in enumerate(paths, start=1):
            buttons = self.driver.execute_script(
                "return [...document.querySelectorAll(`#screen-kitchen .card[data-id='${arguments[0]}'] button`)]"
                ".map(b => b.textContent)", str(number))
            self.assertEqual(buttons, offered.get(status, []), status)
            self.assertEqual(self.column_of(self.driver, number), f"column-{status}" if status in offered else None)

    def test_a_move_that_lost_a_race_says_changed_elsewhere(self):
        self.place("Ann Lee")
        self.open_board(self.driver)
        self.wait(lambda: self.column_of(self.driver, 1) == "column-placed", "the order on the board")
        self.assertEqual(self.server.api("PATCH", "/api/cupcakes/1", {"status": "baking"}, key=self.staff)[0], 200)
        self.wait(lambda: self.column_of(self.driver, 1) == "column-baking", "the board follows the move")
        # A board that has not heard of that move yet: its card still holds version 1.
        self.driver.execute_script("document.querySelector(`#screen-kitchen .card[data-id='1']`).dataset.version = '1'")
        self.button("Move order 1 to Out for delivery").click()
        self.wait(lambda: "Changed elsewhere" in self.driver.find_element(
            By.CSS_SELECTOR, "#screen-kitchen .card[data-id='1']").text, "the card says it changed elsewhere")
        self.assertEqual(self.column_of(self.driver, 1), "column-baking", "shown as it is, not overwritten")
        status, _, body = self.server.api("GET", "/api/cupcakes/1", key=self.staff)
        self.assertEqual(body["data"]["status"], "baking")


def webhook_config():
    """A server config that lets webhooks reach loopback, with retries a thousand times sooner."""
    handle, path = tempfile.mkstemp(prefix="cupcake-browser-", suffix=".json")
    with os.fdopen(handle, "w") as file:
        json.dump({"webhookAllowPrivateAddresses": True, "webhookRetryScale": 0.001}, file)
    return path


class KitchenWebhookTests(StorefrontTest):
    """The board's settings show each webhook endpoint's health, and enable a disabled one."""
    server_arguments = ("--api-key", "app-key-for-the-test", "--staff-key", "staff-key-for-the-test",
                        "--config", webhook_config())
    staff = "staff-key-for-the-test"

    def test_the_settings_show_each_webhooks_health_and_enable_a_disabled_one(self):
        with socket.socket() as probe:  # a loopback port nothing listens on
            probe.bind(("127.0.0.1", 0))
            closed = probe.getsockname()[1]
        failing_url, healthy_url = f"http://127.0.0.1:{closed}/hooks", f"http://127.0.0.1:{closed}/other"
        for url in (failing_url, healthy_url):
            status, _, _ = self.server.api("POST", "/api/webhook-endpoints", {"url": url}, key=self.staff)
            self.assertEqual(status, 201)
        self.assertEqual(self.server.api("PATCH", "/api/webhook-endpoints/2", {"enabled": False},
                                         key=self.staff)[0], 200)
        status, _, _ = self.server.api("POST", "/api/cupcakes", {
            "type": 1, "quantity": 3, "name": "Ann", "streetAddress": "1 Main St", "city": "Nashville",
            "zip": "37201"}, key=self.staff)
        self.assertEqual(status, 201)
        # The delivery to the closed port fails: the first endpoint is failing.
        deadline = time.time() + WAIT
        while time.time() < deadline and not self.server.api(
                "GET", "/api/webhook-endpoints/1", key=self.staff)[2]["failingSince"]:
            time.sleep(0.05)
        self.driver.get(self.server.url + "/")
        self.driver.execute_script(f"sessionStorage.setItem('cupcake.apiKey', '{self.staff}')")
        self.driver.get(self.server.url + "/#kitchen")
        self.driver.find_element(By.CSS_SELECTOR, "#kitchen-settings summary").click()
        self.wait(lambda: self.text_of("webhooks-status") == "2 webhooks", "the two endpoints listed")
        items = lambda: [item.text for item in self.driver.find_elements(By.CSS_SELECTOR, "#webhooks .endpoint")]
        self.assertIn("Failing since", items()[0])
        self.assertIn(failing_url, items()[0])
        self.assertIn("Disabled: disabled by the staff", items()[1])
        self.button(f"Enable the webhook to {healthy_url} again").click()
        self.wait(lambda: "Disabled" not in items()[1], "the endpoint enabled again")
        self.assertTrue(self.server.api("GET", "/api/webhook-endpoints/2", key=self.staff)[2]["enabled"])


class KeyTests(StorefrontTest):
    server_arguments = ("--api-key", "app-key-for-the-test", "--staff-key", "staff-key-for-the-test")

    def test_a_shop_with_keys_refuses_without_one_then_the_persons_key_places_the_order_once(self):
        source = self.server.api("GET", "/")[2].decode()
        self.assertNotIn("app-key-for-the-test", source)
        self.to_checkout("Rainbow", 3, "$7.50")  # the quote needs no key
        self.button("Place Order").click()
        title, message = self.dialog()
        self.assertEqual(title, "Checkout failed")
        self.assertIn("key", message.lower())
        self.assertNotIn("{", message)
        self.button("OK").click()
        self.button("Key").click()
        self.control("Key").send_keys("app-key-for-the-test")
        self.button("Save").click()
        self.button("Place Order").click()
        title, message = self.dialog()
        self.assertEqual((title, message), ("Thank you!", "Your order for 3x rainbow cupcakes is on its way!"))
        status, _, listed = self.server.api("GET", "/api/cupcakes", key="staff-key-for-the-test")
        self.assertEqual((status, listed["total"]), (200, 1))


class OrdersScreenTests(StorefrontTest):
    def place(self, name, cake_type, quantity):
        status, _, _ = self.server.api("POST", "/api/cupcakes", {
            "type": cake_type, "quantity": quantity, "name": name, "streetAddress": "1 Main St",
            "city": "Nashville", "zip": "37201"})
        self.assertEqual(status, 201)

    def rows(self):
        # Read in one script, so a list redrawn meanwhile is never read half old, half new.
        return self.driver.execute_script(
            "return [...document.querySelectorAll('#orders-table tbody tr')].map(r => r.innerText)")

    def names(self):
        return self.driver.execute_script(
            "return [...document.querySelectorAll('#orders-table tbody tr')].map(r => r.cells[2].textContent)")

    def test_each_order_shows_its_status_and_only_a_placed_one_is_cancelled_here(self):
        self.place("Ann Lee", 0, 3)
        self.place("Bob Stone", 1, 4)
        self.assertEqual(self.server.api("PATCH", "/api/cupcakes/1", {"status": "baking"})[0], 200)
        self.open("#orders")
        self.wait(lambda: len(self.rows()) == 2, "two orders listed")
        statuses = self.driver.execute_script(
            "return [...document.querySelectorAll('#orders-table tbody tr')].map(r => r.cells[6].textContent)")
        self.assertEqual(statuses, ["Placed", "Baking"])
        self.button("Cancel order 2")
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "button[aria-label='Cancel order 1']"), [],
                         "a started order is not cancelled from the list (it needs a reason)")

    def test_an_empty_list_says_so(self):
        self.open("#orders")
        self.wait(lambda: self.text_of("orders-status") == "No orders yet.", "the empty list says so")

    def test_search_sort_favourites_and_cancel(self):
        for name, cake_type, quantity in (("Ann Lee", 0, 3), ("Bob Stone", 2, 12), ("anna Cruz", 1, 6),
                                          ("Zed Young", 3, 4)):
            self.place(name, cake_type, quantity)
        self.open("#orders")
        self.wait(lambda: len(self.rows()) == 4, "four orders listed")
        self.assertEqual(self.names(), ["Zed Young", "anna Cruz", "Bob Stone", "Ann Lee"], "newest first")
        Select(self.control("Sort by")).select_by_visible_text("Name, A to Z")
        self.wait(lambda: self.names() == ["Ann Lee", "anna Cruz", "Bob Stone", "Zed Young"], "by name")
        Select(self.control("Sort by")).select_by_visible_text("Cost, highest first")
        self.wait(lambda: self.names()[0] == "Bob Stone", "by cost, highest first")
        self.control("Search by name").send_keys("an")
        self.wait(lambda: sorted(self.names()) == ["Ann Lee", "anna Cruz"], "the prefix filters as you type")
        self.control("Search by name").send_keys(Keys.BACKSPACE, Keys.BACKSPACE)
        self.wait(lambda: len(self.rows()) == 4, "all four again")
        # A star survives a reload.
        self.button("Favourite order 2").click()
        self.wait(lambda: self.button("Favourite order 2").get_attribute("aria-pressed") == "true", "starred")
        self.driver.refresh()
        self.wait(lambda: len(self.rows()) == 4, "listed after a reload")
        self.wait(lambda: self.button("Favourite order 2").get_attribute("aria-pressed") == "true",
                  "still starred after a reload")
        self.control("Favourites only").click()
        self.wait(lambda: self.names() == ["Bob Stone"], "favourites only")
        self.control("Favourites only").click()
        self.wait(lambda: len(self.rows()) == 4, "everything again")
        # Cancel asks first; "Keep it" keeps it.
        self.button("Cancel order 3").click()
        title, _ = self.dialog()
        self.assertEqual(title, "Cancel this order?")
        self.button("Keep it").click()
        self.assertEqual(self.server.api("GET", "/api/cupcakes/3")[0], 200)
        self.button("Cancel order 3").click()
        self.dialog()
        self.button("Cancel order").click()
        self.wait(lambda: len(self.rows()) == 3 and "anna Cruz" not in self.names(), "the cancelled order is gone")
        status, _, body = self.server.api("GET", "/api/cupcakes/3")
        self.assertEqual(status, 200, "kept")
        self.assertEqual(body["data"]["status"], "cancelled")

    def test_pages_turn(self):
        for number in range(12):
            self.place(f"Customer {number:02d}", number % 4, 3 + number)
        self.open("#orders")
        self.wait(lambda: len(self.rows()) == 10, "ten on the first page")
        self.assertEqual(self.text_of("page-label"), "Page 1 of 2")
        self.button("Next").click()
        self.wait(lambda: len(self.rows()) == 2, "two on the second page")
        self.assertFalse(self.button("Next").is_enabled())
        self.button("Previous").click()
        self.wait(lambda: len(self.rows()) == 10, "back to the first page")

    def test_a_missing_value_shows_as_a_dash(self):
        # An order stored without a name (written straight into the database, as an old import
        # might have left it), served by a server restarted on that database.
        self.place("Ann Lee", 0, 3)
        self.server.stop()
        database = sqlite3.connect(self.server.database)
        with database:  # commits; the connection is closed below, before the server opens the file
            database.execute(
                "INSERT INTO orders (type, quantity, special_request_enabled, extra_frosting, add_sprinkles, name, "
                "street_address, city, zip, cost_cents, created_at_ms, is_favorite, name_key) "
                "VALUES (1, 4, 0, 0, 0, '', '', 'Austin', '73301', 850, ?, 0, '')", (int(time.time() * 1000),))
        database.close()
        self.server = Server(database=self.server.database)
        self.addCleanup(self.server.stop)
        self.open("#orders")
        self.wait(lambda: len(self.rows()) == 2, "both listed")
        self.assertEqual(self.names(), ["—", "Ann Lee"])


class SafetyTests(StorefrontTest):
    def test_headers_caching_and_no_inline_script(self):
        status, headers, page = self.server.api("GET", "/")
        self.assertEqual(status, 200)
        policy = headers["Content-Security-Policy"]
        self.assertIn("script-src 'self'", policy)
        self.assertIn("default-src 'none'", policy)
        self.assertNotIn("unsafe-inline", policy)
        self.assertEqual(headers["X-Content-Type-Options"], "nosniff")
        self.assertIsNone(re.search(rb"<script(?![^>]*\bsrc=)", page), "no inline script in the page")
        self.assertIsNone(re.search(rb"<[^>]+\son[a-z]+=", page), "no inline event handlers")
        self.assertIsNone(re.search(rb"(src|href)=\"(https?:)?//", page), "nothing from another origin")
        for path in ("/assets/app.js", "/assets/app.css", "/assets/cupcake.svg"):
            status, headers, _ = self.server.api("GET", path)
            self.assertEqual(status, 200, path)
            self.assertIn("max-age", headers["Cache-Control"], path)
            status, _, _ = self.server.api("GET", path, headers={"If-None-Match": headers["ETag"]})
            self.assertEqual(status, 304, path)
        status, headers, _ = self.server.api("GET", "/api/cupcakes")
        self.assertEqual(headers["Cache-Control"], "no-store")
        status, headers, _ = self.server.api("POST", "/api/quote", {"type": 0, "quantity": 3})
        self.assertEqual((status, headers["Cache-Control"]), (200, "no-store"))

    def test_the_page_runs_under_its_policy_without_a_violation(self):
        self.open()
        self.wait(lambda: self.text_of("order-total") == "Your total is $6.00", "the script ran and quoted")
        self.open("#orders")
        self.wait(lambda: self.text_of("orders-status") == "No orders yet.", "the orders screen ran")
        problems = [entry["message"] for entry in self.driver.get_log("browser")
                    if entry["level"] in ("SEVERE", "WARNING")]
        self.assertEqual(problems, [])


class ScreenshotTests(StorefrontTest):
    def test_every_screen_at_phone_and_desktop_width(self):
        self.server.api("POST", "/api/cupcakes", {"type": 2, "quantity": 5, "specialRequestEnabled": True,
                                                  "extraFrosting": True, "name": "Taylor Swift",
                                                  "streetAddress": "1 Main St", "city": "Nashville", "zip": "37201"})
        self.server.api("PATCH", "/api/cupcakes/1", {"isFavorite": True})
        self.server.api("POST", "/api/cupcakes", {"type": 0, "quantity": 3, "name": "Ann Lee",
                                                  "streetAddress": "2 Elm St", "city": "Austin", "zip": "73301"})
        saved = []
        for width_name, (width, height) in (("phone", PHONE), ("desktop", DESKTOP)):
            self.driver.set_window_size(width, height)
            self.open()
            self.choose_order("Chocolate", 5, frosting=True)
            self.wait(lambda: self.text_of("order-total") == "Your total is $16.00", "quoted")
            saved.append(self.screenshot(f"order-{width_name}"))
            self.button("Delivery details").click()
            self.fill_address()
            self.wait(lambda: self.button("Check out").is_enabled(), "Check out enabled")
            saved.append(self.screenshot(f"delivery-{width_name}"))
            self.button("Check out").click()
            self.wait(lambda: self.text_of("checkout-total") == "Your total is $16.00", "the checkout total")
            saved.append(self.screenshot(f"checkout-{width_name}"))
            self.button("Place Order").click()
            self.dialog()
            saved.append(self.screenshot(f"thank-you-{width_name}"))
            self.button("OK").click()
            self.open("#orders")
            self.wait(lambda: len(self.driver.find_elements(By.CSS_SELECTOR, "#orders-table tbody tr")) >= 3,
                      "orders listed")
            saved.append(self.screenshot(f"orders-{width_name}"))
            # Nothing wider than the window: no sideways scrolling on a phone.
            for fragment in ("#order", "#delivery", "#checkout", "#orders"):
                self.open(fragment)
                overflow = self.driver.execute_script(
                    "return document.documentElement.scrollWidth - window.innerWidth")
                self.assertLessEqual(overflow, 0, f"{fragment} at {width}px overflows by {overflow}px")
            self.driver.execute_script("sessionStorage.clear(); localStorage.clear();")
        for path in saved:
            self.assertGreater(os.path.getsize(path), 5000, path)
        print(f"\nSCREENSHOTS {len(saved)} in {SCREENSHOTS}")


class AccessibilityTests(StorefrontTest):
    """axe-core (a tool we did not write, shipped by PyPI's axe-selenium-python) on every screen
    and dialog, at phone and desktop width: no violation of any impact."""

    def violations(self, where):
        axe = Axe(self.driver)
        axe.inject()
        results = axe.run()
        return [f"{where}: {v['id']} ({v['impact']}) on "
                + ", ".join(" ".join(node["target"]) for node in v["nodes"][:4]) for v in results["violations"]]

    def test_axe_finds_no_violation_on_any_screen(self):
        self.driver.set_script_timeout(WAIT * 3)
        self.server.api("POST", "/api/cupcakes", {"type": 2, "quantity": 5, "specialRequestEnabled": True,
                                                  "extraFrosting": True, "name": "Taylor Swift",
                                                  "streetAddress": "1 Main St", "city": "Nashville", "zip": "37201"})
        found = []
        for width_name, (width, height) in (("phone", PHONE), ("desktop", DESKTOP)):
            self.driver.set_window_size(width, height)
            self.open()
            self.choose_order("Chocolate", 5, frosting=True)
            self.wait(lambda: self.text_of("order-total") == "Your total is $16.00", "quoted")
            found += self.violations(f"order ({width_name})")
            self.button("Delivery details").click()
            self.fill_address()
            self.wait(lambda: self.button("Check out").is_enabled(), "Check out enabled")
            found += self.violations(f"delivery ({width_name})")
            self.button("Check out").click()
            self.wait(lambda: self.text_of("checkout-total") == "Your total is $16.00", "the checkout total")
            found += self.violations(f"checkout ({width_name})")
            self.button("Place Order").click()
            self.dialog()
            found += self.violations(f"thank-you dialog ({width_name})")
            self.button("OK").click()
            self.open("#order")
            self.wait(lambda: self.text_of("tracking-status").startswith("Order "), "the order followed")
            found += self.violations(f"order followed ({width_name})")
            self.open("#orders")
            self.wait(lambda: len(self.driver.find_elements(By.CSS_SELECTOR, "#orders-table tbody tr")) >= 2,
                      "orders listed")
            found += self.violations(f"orders ({width_name})")
            self.button("Cancel order 1").click()
            self.dialog()
            found += self.violations(f"cancel dialog ({width_name})")
            self.button("Keep it").click()
            self.button("Key").click()
            self.dialog()
            found += self.violations(f"key dialog ({width_name})")
            self.open("#kitchen")
            self.wait(lambda: "open order" in self.text_of("kitchen-status"), "the kitchen board")
            found += self.violations(f"kitchen ({width_name})")
            self.driver.execute_script("sessionStorage.clear(); localStorage.clear();")
        self.assertEqual(found, [], "\n".join(found))


if __name__ == "__main__":
    unittest.main(verbosity=2)
