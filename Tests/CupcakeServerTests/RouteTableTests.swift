import CupcakeTestSupport
import Foundation
import Testing

@testable import CupcakeServer

/// The route table against what is derived from it and what must agree with it.
@Suite struct RouteTableTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The OpenAPI description's paths and their methods, read from its `paths:` section.
    static func documented() throws -> [String: Set<String>] {
        let text = try String(
            contentsOf: packageRoot.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
        var paths: [String: Set<String>] = [:]
        var inPaths = false
        var current: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" {
                inPaths = true
                continue
            }
            guard inPaths else { continue }
            if let first = line.first, first != " " { break }
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                current = String(line.dropFirst(2).dropLast())
                paths[current ?? "", default: []] = []
            } else if let current, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                let word = line.trimmingCharacters(in: .whitespaces).dropLast()
                if ["get", "post", "patch", "delete", "put", "head", "options"].contains(word) {
                    paths[current, default: []].insert(word.uppercased())
                }
            }
        }
        return paths
    }

    @Test func everyRouteAndMethodIsInTheOpenAPIDescriptionAndNothingElse() throws {
        let documented = try Self.documented()
        var routed: [String: Set<String>] = [:]
        for route in Route.table {
            guard let template = route.template else { continue }
            routed[template] = Set(route.methods.map(\.name))
        }
        #expect(routed == documented)
    }

    struct Lookup: Sendable, CustomTestStringConvertible {
        var path: String
        var label: String
        var testDescription: String { path }
    }

    /// Each path finds its route (the metrics' label), and no other: the patterns do not overlap.
    @Test(arguments: [
        Lookup(path: "/api/cupcakes", label: "/api/cupcakes"), Lookup(path: "/api/cupcakes/", label: "/api/cupcakes"),
        Lookup(path: "/api/cupcakes/7", label: "/api/cupcakes/{id}"),
        Lookup(path: "/api/cupcakes/x/y", label: "/api/cupcakes/{id}"), Lookup(path: "/api/quote", label: "/api/quote"),
        Lookup(path: "/metrics", label: "/metrics"), Lookup(path: "/api/backup", label: "/api/backup"),
        Lookup(path: "/healthz", label: "/healthz"), Lookup(path: "/readyz", label: "/readyz"),
        Lookup(path: "/openapi.yaml", label: "/openapi.yaml"), Lookup(path: "/", label: "storefront"),
        Lookup(path: "/assets/app.js", label: "storefront"), Lookup(path: "/api", label: "other"),
        Lookup(path: "/api/nothing", label: "other"), Lookup(path: "/assets/missing.js", label: "other"),
    ])
    func eachPathFindsOneRoute(_ lookup: Lookup) {
        let matching = Route.table.filter { $0.matches(lookup.path).0 }
        #expect(matching.count <= 1)
        #expect(Metrics.route(lookup.path) == lookup.label)
    }

    /// 405's `Allow` and the preflight's methods come from the table: GET brings HEAD (not for
    /// a backup), and CORS offers every method the API's routes have.
    @Test func allowAndCORSAreDerivedFromTheTable() {
        let allowed = Dictionary(
            uniqueKeysWithValues: Route.table.compactMap { route in
                route.template.map { ($0, route.allowed) }
            })
        #expect(allowed["/api/cupcakes"] == ["GET", "HEAD", "POST"])
        #expect(allowed["/api/cupcakes/{id}"] == ["GET", "HEAD", "PATCH", "DELETE"])
        #expect(allowed["/api/backup"] == ["GET"])
        #expect(OrderAPI.corsMethods == "GET, HEAD, POST, PATCH, DELETE")
    }
}
