import CupcakeJSON
import FoundationEssentials

/// The properties every layer relies on, checked for one raw input: the fuzz target
/// (fuzz/OrderFuzzer.swift) traps when any is broken, and the test suite replays every saved
/// input through the same check.
enum OrderInvariants {
    /// What is wrong with how the domain handled `bytes`; empty when all is well.
    static func violations(_ bytes: [UInt8]) -> [String] {
        var broken: [String] = []
        let order: Order
        do {
            order = try Order.decode(json: bytes)
        } catch {
            // A refused body must be explained (a key, a line and column, or a reason).
            if error.description.isEmpty { broken.append("an empty decoding error") }
            return broken
        }
        // The fast path and JSONDecoder agree on whatever the fast path accepts.
        if let fast = bytes.withUnsafeBufferPointer({ OrderFastDecoder.decode($0) }),
            fast != (try? JSONDecoder().decode(Order.self, from: Data(bytes)))
        {
            broken.append("the fast decoder disagrees with JSONDecoder")
        }
        // Every accepted order is strict JSON (jansson reads it, or refuses it only for a limit
        // of its own): neither path is laxer than the other, whichever one took it.
        do throws(JSONSyntaxError) {
            _ = try JSONValue.parse(bytes)
        } catch  where !error.isBeyondLimits {
            broken.append("an order was accepted from text that is not strict JSON")
        } catch {}
        // The reset rule and trimming hold on the decoded order.
        if !order.specialRequestEnabled && (order.extraFrosting || order.addSprinkles) {
            broken.append("an extra survived with special requests off")
        }
        for field in [order.name, order.streetAddress, order.city, order.zip] where field != Order.trimmed(field) {
            broken.append("an address field is stored untrimmed")
        }
        // The wire format round-trips.
        if (try? Order.decode(json: order.wireJSON)) != order {
            broken.append("the wire JSON does not decode to the same order")
        }
        // Pricing succeeds exactly when type and quantity are valid, and agrees with costCents.
        let issues = order.validate(includingAddress: false)
        do {
            let price = try order.price()
            if !issues.isEmpty { broken.append("an invalid order was priced") }
            if price.totalCents != order.costCents { broken.append("the line items disagree with costCents") }
            if price.totalCents <= 0 { broken.append("a price that is not positive") }
        } catch {
            if issues.isEmpty { broken.append("a valid order was not priced") }
        }
        // Validation names wire keys only.
        let keys = Set(Order.CodingKeys.allCases.map(\.rawValue))
        if !order.validate().allSatisfy({ keys.contains($0.field) }) {
            broken.append("a validation issue names an unknown field")
        }
        return broken
    }
}
