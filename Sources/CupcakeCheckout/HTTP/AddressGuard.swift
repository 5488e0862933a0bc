import CCurl
import Glibc

/// Checks each address libcurl is about to connect to against ``AddressRule`` (libcurl's
/// `CURLOPT_OPENSOCKETFUNCTION`): the check happens after name resolution, on the very address
/// connected to, so a name that resolves to a loopback or private address is refused too, and
/// so is one that changed its answer since it was checked. One per exchange, used by one thread.
final class AddressGuard {
    /// Whether private, loopback and link-local addresses are allowed (tests; private networks).
    let allowPrivate: Bool
    /// The address refused and why, when one was.
    var refused: String?

    init(allowPrivate: Bool) {
        self.allowPrivate = allowPrivate
    }

    /// The callback: a socket for an allowed address, CURL_SOCKET_BAD (libcurl then fails with
    /// "couldn't connect") for a refused one.
    static let openSocket: cupcake_curl_opensocket_callback = { context, purpose, address in
        guard let context, let address else { return -1 }
        let addresses = Unmanaged<AddressGuard>.fromOpaque(context).takeUnretainedValue()
        let family = address.pointee.family
        if !addresses.allowPrivate {
            let verdict = withUnsafeMutablePointer(to: &address.pointee.addr) { pointer in
                AddressRule.refusal(UnsafePointer(pointer), family: family)
            }
            if let refusal = verdict.refusal {
                addresses.refused = "\(verdict.text) is \(refusal)"
                return -1
            }
        }
        // Close-on-exec, as libcurl's own sockets are.
        return socket(family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.protocol)
    }
}
