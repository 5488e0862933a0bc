import Foundation
import Testing

@testable import CupcakeCheckout

/// Retry-After as the server may write it, and an order id as one path segment.
@Suite struct RetryAfterTests {
    /// 1994-11-06 08:49:37 UTC, RFC 9110's example date.
    static let example = Date(timeIntervalSince1970: 784_111_777)

    @Test(arguments: [
        ("120", 120.0),
        (" 1.5 ", 1.5),
        ("Sun, 06 Nov 1994 08:49:37 GMT", 30),
        ("Sunday, 06-Nov-94 08:49:37 GMT", 30),
        ("Sun Nov  6 08:49:37 1994", 30),
    ])
    func secondsOrAnHTTPDateInAnyOfItsThreeForms(text: String, seconds: Double) {
        #expect(RetryPolicy.seconds(retryAfter: text, now: Self.example.addingTimeInterval(-30)) == seconds)
    }

    @Test(arguments: ["soon", "", "Sun, 06 Foo 1994 08:49:37 GMT", "inf"])
    func anythingElseIsNoRetryAfter(text: String) {
        #expect(RetryPolicy.seconds(retryAfter: text, now: Self.example) == nil)
    }

    @Test(arguments: [
        ("42", "42"), ("a/b", "a%2Fb"), ("a b?c#d", "a%20b%3Fc%23d"), ("100%", "100%25"), ("é", "%C3%A9"),
        ("x:y@z!$&'()*+,;=-._~", "x:y@z!$&'()*+,%3B=-._~"),
    ])
    func anOrderIdIsOnePathSegment(id: String, segment: String) {
        #expect(OrdersClient.pathSegment(id) == segment)
    }
}
