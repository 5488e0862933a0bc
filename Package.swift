// swift-tools-version:6.0
import PackageDescription

/// Settings every Swift target shares, applied in one loop at the bottom (as swift-log does).
let sharedSwiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "cupcake",
    products: [
        // The client: price, order, orders, address. Loads no database or server library.
        .executable(name: "cupcake", targets: ["cupcake"]),
        // Everything, `serve` and `backup` included; `cupcake serve` starts it in its place.
        .executable(name: "cupcake-server", targets: ["cupcake-server"]),
    ],
    targets: [
        // C libraries from Debian.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // libpq: the PostgreSQL engine.
        .systemLibrary(
            name: "CPostgres",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // libcurl: the checkout client's HTTP. Its headers only: the client opens the library
        // when it first sends a request (dlopen, see Sources/CCurl/shim.h), so no pkg-config
        // link flags here.
        .systemLibrary(
            name: "CCurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // jansson: reading whole JSON documents (config files, endpoint answers, the diagnosis
        // of a body that is not an order) with a syntax error's line and column, so that the
        // client links no Foundation. No pkg-config: its `-L/usr/lib/<triple>` would come before
        // Linking/ and the release client would load libjansson.so instead of linking the
        // static archive in (see `cupcake` below); the header and the library are on the
        // default paths.
        .systemLibrary(
            name: "CJansson",
            providers: [.apt(["libjansson-dev"])]
        ),
        // OpenSSL's libcrypto: SHA-256 of receipt tokens, which the server keeps only hashed.
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),

        // JSON: whole documents read by jansson (JSONValue), and a writer, for every module.
        .target(name: "CupcakeJSON", dependencies: ["CJansson"]),
        // Domain: the Order, its rules and its price. No I/O.
        .target(name: "CupcakeDomain", dependencies: ["CupcakeJSON"]),
        // Storage: the OrderStore protocol and its engines, SQLite and PostgreSQL.
        .target(name: "CupcakeStorage", dependencies: ["CupcakeDomain", "CSQLite", "CPostgres"]),
        // Server: the reqres-compatible HTTP endpoint on libmicrohttpd.
        .target(
            name: "CupcakeServer",
            dependencies: [
                "CupcakeDomain", "CupcakeJSON", "CupcakeStorage", "CupcakeCheckout", "CMicroHTTPD", "CCrypto",
            ],
            // The OpenAPI description (a link to docs/openapi.yaml) and the storefront's files
            // (Web/), compiled into the binary.
            resources: [
                .embedInCode("Resources/openapi.yaml"), .embedInCode("Web/index.html"), .embedInCode("Web/app.js"),
                .embedInCode("Web/app.css"), .embedInCode("Web/cupcake.svg"),
            ]),
        // Checkout: the client that places an order with an endpoint.
        .target(name: "CupcakeCheckout", dependencies: ["CupcakeDomain", "CupcakeJSON", "CCurl"]),
        // CLI: argument parsing and the client's commands, testable in-process. `serve` and
        // `backup` are described here and run by CupcakeServerCommands.
        .target(name: "CupcakeCLI", dependencies: ["CupcakeDomain", "CupcakeJSON", "CupcakeCheckout"]),
        // The work of `serve` and `backup`, which needs the server and the storage engines.
        .target(
            name: "CupcakeServerCommands",
            dependencies: ["CupcakeCLI", "CupcakeCheckout", "CupcakeServer", "CupcakeStorage"]),
        // The thin executables.
        .executableTarget(
            name: "cupcake", dependencies: ["CupcakeCLI"],
            // In release builds (made with --static-swift-stdlib, see scripts/lib.sh), a
            // position-dependent executable, as Go links by default: the dynamic loader then has
            // no relocations to apply to the binary's own data (about 70,000 with the Swift
            // runtime and Foundation linked in), a quarter of `cupcake price`'s start-up.
            // Libraries, heap and stack are still placed at random.
            //
            // And the C++ runtime that the static Swift runtime needs is linked in from gcc's
            // static libstdc++ (Linking/libstdc++.so is a linker script that names libstdc++.a)
            // rather than loaded as libstdc++.so.6: about 0.3 ms of every start. Its symbols stay
            // private to the executable (the static runtime's link hides every archive's), and
            // nothing the client loads (libcurl and its libraries) uses libstdc++.
            //
            // jansson likewise (Linking/libjansson.so names libjansson.a): one library fewer to
            // load, about 0.04 ms. It keeps its symbols to itself like the rest, and no library
            // the client loads uses jansson.
            //
            // gcc's unwinder likewise (-static-libgcc: libgcc_eh.a instead of libgcc_s.so.1):
            // loading libgcc_s and its constructor's CPU probing (cpuid, slow in a VM) took about
            // 0.1 ms of every start. The executable holds the process's only C++ code, so one
            // unwinder serves it all; neither libcurl nor any library it loads uses libgcc_s.
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-Xclang-linker", "-no-pie", "-Xclang-linker", "-static-libgcc",
                        "-L\(Context.packageDirectory)/Linking",
                    ],
                    .when(configuration: .release))
            ]),
        .executableTarget(name: "cupcake-server", dependencies: ["CupcakeServerCommands"]),
        // Benchmark tooling: bulk-loads generated orders into a database (scripts/bench).
        .executableTarget(
            name: "cupcake-seed", dependencies: ["CupcakeStorage", "CupcakeTestSupport"], path: "bench/Seed"),

        // Helpers shared by the test targets.
        .target(
            name: "CupcakeTestSupport",
            dependencies: [
                "CupcakeDomain", "CupcakeJSON", "CupcakeCLI", "CupcakeServer", "CupcakeServerCommands",
                "CupcakeStorage",
            ]
        ),

        .testTarget(name: "CupcakeDomainTests", dependencies: ["CupcakeDomain", "CupcakeTestSupport"]),
        .testTarget(name: "CupcakeCLITests", dependencies: ["CupcakeCLI", "CupcakeTestSupport"]),
        .testTarget(name: "CupcakeStorageTests", dependencies: ["CupcakeStorage", "CupcakeTestSupport"]),
        .testTarget(
            name: "CupcakeServerTests",
            dependencies: ["CupcakeServer", "CupcakeStorage", "CupcakeTestSupport"]
        ),
        .testTarget(
            name: "ReliabilityTests",
            dependencies: ["CupcakeDomain", "CupcakeStorage", "CupcakeTestSupport"]
        ),
        .testTarget(
            name: "CupcakeCheckoutTests",
            dependencies: ["CupcakeCheckout", "CupcakeCLI", "CupcakeTestSupport"]
        ),
    ]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + sharedSwiftSettings
}
