import CupcakeDomain
import CupcakeStorage

/// The live routes: `GET /api/cupcakes/{id}/events` (one order's changes, for its customer or
/// the staff) and `GET /api/events/stream` (every order's, for the staff), as Server-Sent
/// Events. A `Last-Event-ID` resumes after the event it names.
extension OrderAPI {
    func orderEvents(
        _ request: HTTPRequest, idText: String, access: Access, respond: @escaping @Sendable (HTTPResponse) -> Void
    ) throws {
        let notFound = Problem.notFound("There is no order with id '\(idText)'.")
        guard let id = Self.canonicalID(idText), let stored = try store.order(id: id) else { throw notFound }
        if access == .app {
            guard ReceiptToken.matches(request.header("order-token"), stored: stored.receiptHash) else {
                throw notFound
            }
        }
        let hub = try requireHub()
        let stream = try hub.subscribe(
            orderID: id, after: try Self.lastEventID(request), isFinal: stored.status.isFinal)
        respond(Self.eventStreamResponse(stream))
    }

    func eventStream(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) throws {
        let hub = try requireHub()
        let stream = try hub.subscribe(orderID: nil, after: try Self.lastEventID(request))
        respond(Self.eventStreamResponse(stream))
    }

    private func requireHub() throws(Problem) -> EventHub {
        guard let events else { throw Problem.unavailable("Live updates are not running on this server.") }
        return events
    }

    /// `Last-Event-ID` as a position in the log; 400 for one this server did not send.
    static func lastEventID(_ request: HTTPRequest) throws(Problem) -> EventPosition? {
        guard let text = request.header("last-event-id")?.trimmingOptionalWhitespace, !text.isEmpty else {
            return nil
        }
        guard let position = EventPosition(text: text) else {
            throw Problem.badRequest("Last-Event-ID '\(text)' is not an event id this server sent.")
        }
        return position
    }

    static func eventStreamResponse(_ stream: ResponseStream) -> HTTPResponse {
        HTTPResponse(
            status: 200,
            headers: [
                ("Content-Type", "text/event-stream; charset=utf-8"),
                // nginx passes it on as it comes instead of buffering it.
                ("X-Accel-Buffering", "no"),
            ], stream: stream)
    }
}
