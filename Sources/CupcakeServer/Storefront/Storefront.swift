import Foundation

/// The shop's web pages: the files in `Web/`, compiled into the binary and served at `/` with
/// headers that keep a browser safe (a Content-Security-Policy that allows only this origin's
/// own files, no inline script) and cache them correctly (an ETag, revalidated).
enum Storefront {
    /// One file of the page.
    struct Asset: Sendable {
        var contentType: String
        var bytes: [UInt8]
        /// How long a browser may keep it without asking: the page itself always asks (it names
        /// the other files), the others for five minutes.
        var cacheControl: String
        /// A strong validator of the bytes.
        var etag: String

        init(_ contentType: String, _ bytes: [UInt8], cacheControl: String = "public, max-age=300") {
            self.contentType = contentType
            self.bytes = bytes
            self.cacheControl = cacheControl
            etag = "\"\(Self.fingerprint(bytes))\""
        }

        /// FNV-1a, 64 bits, as hex: enough to tell two versions of a file apart.
        static func fingerprint(_ bytes: [UInt8]) -> String {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes {
                hash ^= UInt64(byte)
                hash = hash &* 0x100_0000_01b3
            }
            let hex = String(hash, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }
    }

    /// The files, by path.
    static let assets: [String: Asset] = [
        "/": Asset("text/html; charset=utf-8", PackageResources.index_html, cacheControl: "no-cache"),
        "/assets/app.js": Asset("text/javascript; charset=utf-8", PackageResources.app_js),
        "/assets/app.css": Asset("text/css; charset=utf-8", PackageResources.app_css),
        "/assets/cupcake.svg": Asset("image/svg+xml", PackageResources.cupcake_svg),
    ]

    /// Only this origin's own script, styles, image and API; no inline script or style, no
    /// plugin, no frame around the page, no form sent elsewhere.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The answer for a GET or HEAD of one of the files: 200, or 304 when the browser's copy
    /// (`If-None-Match`) is current.
    static func response(for asset: Asset, ifNoneMatch: String?) -> HTTPResponse {
        var headers: [(name: String, value: String)] = [
            ("ETag", asset.etag),
            ("Cache-Control", asset.cacheControl),
            ("Content-Security-Policy", contentSecurityPolicy),
            ("Referrer-Policy", "no-referrer"),
            ("Cross-Origin-Opener-Policy", "same-origin"),
        ]
        if let ifNoneMatch,
            ifNoneMatch.split(separator: ",").contains(where: {
                let tag = $0.trimmingOptionalWhitespace
                return tag == asset.etag || tag == "W/" + asset.etag || tag == "*"
            })
        {
            return HTTPResponse(status: 304, headers: headers)
        }
        headers.insert(("Content-Type", asset.contentType), at: 0)
        return HTTPResponse(status: 200, headers: headers, body: asset.bytes)
    }
}
