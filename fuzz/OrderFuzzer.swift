// libFuzzer target over the domain's whole input path: decode → normalize → validate → price.
// scripts/fuzz builds it with `swiftc -sanitize=fuzzer,address` together with the CupcakeDomain
// sources (so it is part of that module). Besides "never crash", it checks the invariants in
// OrderInvariants; a broken one aborts, and libFuzzer saves the input.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOrder(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let broken = OrderInvariants.violations(bytes)
    if !broken.isEmpty {
        FileHandle.standardError.write(Data("invariant broken: \(broken.joined(separator: "; "))\n".utf8))
        abort()
    }
    return 0
}
