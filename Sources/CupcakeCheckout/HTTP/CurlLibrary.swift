import CCurl

/// libcurl, opened on first use (see `Sources/CCurl/shim.h` for why it is not linked) and set up
/// once for the process (`curl_global_init`), before the first handle is made.
final class CurlLibrary: @unchecked Sendable {
    // Safe: the table is filled before `shared` is published (a Swift global's lazy
    // initialisation runs once, under a lock) and only read afterwards.
    /// The loaded functions, or why libcurl could not be opened.
    let api: Result<UnsafePointer<cupcake_curl>, CheckoutError>

    private init() {
        let table = UnsafeMutablePointer<cupcake_curl>.allocate(capacity: 1)
        table.initialize(to: cupcake_curl())
        if let failure = cupcake_curl_open(table) {
            let reason = String(cString: failure)
            table.deallocate()
            api = .failure(CheckoutError(.configuration, "Cannot load libcurl (Debian package libcurl4): \(reason)"))
            return
        }
        _ = cupcake_curl_global_init(table, Int(CURL_GLOBAL_DEFAULT))
        api = .success(UnsafePointer(table))
    }

    /// The process's libcurl, loaded by the first caller.
    static let shared = CurlLibrary()
}
