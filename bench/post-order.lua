-- wrk script: POST the Cupcake Corner app's order JSON.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"type":2,"quantity":5,"specialRequestEnabled":true,"extraFrosting":true,"addSprinkles":false,"name":"Taylor Swift","streetAddress":"1 Main St","city":"Nashville","zip":"37201"}'
