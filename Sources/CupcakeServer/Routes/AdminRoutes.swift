import CupcakeDomain
import CupcakeStorage
import Foundation

/// The staff's routes besides the orders: `GET /metrics` and `GET /api/backup`.
extension OrderAPI {
    // MARK: - GET /metrics

    func metricsText(respond: @escaping @Sendable (HTTPResponse) -> Void) {
        // Orders by status from the store's totals (kept counts, not a scan); left out when the
        // database cannot be read now, so /metrics still answers.
        let orders = OrderStatus.allCases.compactMap { status -> (status: String, count: Int)? in
            guard let total = try? store.list(OrderQuery(statuses: [status], limit: 1)).total else { return nil }
            return (status.wireName, total)
        }
        let backlog = (try? store.webhookBacklog()).map { backlog in
            (backlog.pending, backlog.oldestMilliseconds.map { Double(max(0, now() - $0)) / 1000 } ?? 0)
        }
        let text = metrics.text(
            ordersByStatus: orders.count == OrderStatus.allCases.count ? orders : [], webhookBacklog: backlog)
        respond(
            HTTPResponse(
                status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                body: Array(text.utf8)))
    }

    // MARK: - GET /api/backup

    func backup(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) throws {
        guard let backups else {
            throw Problem.notFound(
                "This server's database makes no backups through the API: back it up with the database's own tools.")
        }
        let started = backups.start { [log] result in
            switch result {
            case .success(let file):
                let stamp = Timestamp.iso8601(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
                    .replacingOccurrences(of: ":", with: "-")
                respond(
                    HTTPResponse(
                        status: 200,
                        headers: [
                            ("Content-Type", "application/vnd.sqlite3"),
                            ("Content-Disposition", "attachment; filename=\"cupcake-backup-\(stamp).sqlite\""),
                            ("Cache-Control", "no-store"),
                        ], file: file))
            case .failure(let error):
                log.notice("error: backup for request \(request.requestID): \(error)")
                respond(
                    error.code == .temporary
                        ? Problem.storageUnavailable().response
                        : Problem.internalError(requestID: request.requestID).response)
            }
        }
        guard started else {
            throw Problem.conflict("A backup is already being made; retry when it is done.")
        }
    }

}
