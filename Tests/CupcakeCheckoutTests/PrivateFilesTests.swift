import CupcakeCheckout
import CupcakeTestSupport
import Foundation
import Testing

/// The user's private files, by plain path.
@Suite struct PrivateFilesTests {
    @Test(arguments: [
        ("/home/a/.config/cupcake/address.json", "/home/a/.config/cupcake"),
        ("/home/a/.config/cupcake/", "/home/a/.config"),
        ("/home/a/.config/cupcake//", "/home/a/.config"),
        ("/orders.sqlite", "/"),
        ("/", "/"),
        ("orders.sqlite", "."),
        ("backups/orders.sqlite", "backups"),
        ("a b/%20c.json", "a b"),
    ])
    func aPathsFolderIsWhatComesBeforeItsLastSlash(path: String, folder: String) {
        #expect(PrivateFiles.folder(of: path) == folder)
    }

    @Test(arguments: [
        ("/home/a", "cupcake", "/home/a/cupcake"),
        ("/home/a/", "cupcake", "/home/a/cupcake"),
        ("/", "orders.sqlite", "/orders.sqlite"),
        ("relative", ".config/cupcake", "relative/.config/cupcake"),
    ])
    func aNameJoinsItsFolderWithOneSlash(folder: String, name: String, path: String) {
        #expect(PrivateFiles.join(folder, name) == path)
    }

    @Test func aFileIsReadWholeWhateverItsSizeAndName() throws {
        let directory = try TemporaryDirectory()
        // Larger than one read, with a name a file URL would percent-encode.
        let path = directory.path("a b %41.bin")
        let bytes = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect(try PrivateFiles.read(path) == bytes)
        try Data().write(to: URL(fileURLWithPath: path))
        #expect(try PrivateFiles.read(path).isEmpty)
    }

    @Test(arguments: [("missing.json", ENOENT), ("", EISDIR)])
    func aFileThatCannotBeReadSaysWhy(name: String, code: Int32) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path(name)
        let error = #expect(throws: PrivateFiles.FileError.self) { try PrivateFiles.read(path) }
        #expect(error?.path == path)
        #expect(error?.reason == String(cString: strerror(code)))
    }

    @Test func aWrittenFileIsPrivateAndLeavesNoPartialBehind() throws {
        let directory = try TemporaryDirectory()
        let folder = directory.path("new/deeper")
        let path = folder + "/address.json"
        try PrivateFiles.write(Data("first".utf8), to: path)
        try PrivateFiles.write(Data("second".utf8), to: path)
        #expect(try PrivateFiles.read(path) == Data("second".utf8))
        #expect(PrivateFiles.exists(path))
        #expect(!PrivateFiles.exists(folder + "/other.json"))
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect(attributes[.posixPermissions] as? Int == 0o600)
        let folderAttributes = try FileManager.default.attributesOfItem(atPath: folder)
        #expect(folderAttributes[.posixPermissions] as? Int == 0o700)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["address.json"])
    }
}
