/// Who changed an order's status: its customer (holding the order's receipt token) or the
/// bakery's staff.
public enum OrderActor: String, Sendable, Hashable, CaseIterable, Codable {
    case customer
    case staff
}
