/// What a request may do, decided from its key (see ``AccessPolicy``).
enum Access: Equatable {
    /// The staff key: everything.
    case staff
    /// The app key: place orders; one order only with its receipt token.
    case app
    /// A server without keys, asked through a loopback name: everything.
    case open

    /// Whether it may list orders, read any order, make backups.
    var isStaff: Bool { self != .app }
}
