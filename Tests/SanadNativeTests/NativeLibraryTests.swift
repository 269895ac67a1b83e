import Foundation
import SanadNative
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("native libraries through dlopen")
struct NativeLibraryTests {
    /// The C library is on every Linux machine: the system search finds it and resolves a symbol that works.
    @Test func systemSearchFindsTheCLibraryAndItsFunctions() throws {
        let spec = NativeLibrarySpec(
            displayName: "the C library", environmentVariable: nil, systemNames: ["libc.so.6"], installHint: "none")
        let library = try NativeLibrary.load(spec).get()
        #expect(library.path.hasPrefix("/"), "the loaded file's path, not the bare name: \(library.path)")
        typealias FnStrlen = @convention(c) (UnsafePointer<CChar>) -> Int
        let strlen = try library.require("strlen", as: FnStrlen.self)
        #expect(strlen("sanad") == 5)
        #expect(throws: NativeLibraryError.self) { try library.require("no_such_symbol_sanad", as: FnStrlen.self) }
    }

    /// A named path that is missing, a folder or a FIFO is refused before dlopen (a FIFO would block forever).
    @Test func specialFilesAreRefusedWithoutBlocking() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sanad-native-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("fifo.so").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let spec = NativeLibrarySpec(
            displayName: "Test", environmentVariable: "SANAD_TEST_LIB", systemNames: ["libnothing.so"],
            installHint: "install it")
        for (path, words) in [
            (fifo, "not a regular file"), (folder.path, "not a regular file"),
            (folder.appendingPathComponent("missing.so").path, "does not exist"),
        ] {
            let result = NativeLibrary.load(spec, environment: ["SANAD_TEST_LIB": path])
            guard case .failure(let error) = result else {
                Issue.record("\(path) was accepted")
                continue
            }
            #expect(error.reason.contains(words), "\(error.reason)")
            #expect(error.reason.contains("SANAD_TEST_LIB"), "names where the path came from: \(error.reason)")
            #expect(error.reason.hasSuffix("Fix: install it"))
        }
    }

    /// A file that is not a shared library gets dlopen's own words; the option beats the environment variable.
    @Test func notALibraryIsRefusedWithDlopensReason() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sanad-native-\(getpid()).so")
        try Data("not an ELF file".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let spec = NativeLibrarySpec(
            displayName: "Test", environmentVariable: "SANAD_TEST_LIB", systemNames: [], installHint: "x")
        let result = NativeLibrary.load(spec, option: file.path, environment: ["SANAD_TEST_LIB": "/nonexistent"])
        guard case .failure(let error) = result else {
            Issue.record("a text file was accepted as a library")
            return
        }
        #expect(error.reason.contains("config option \"library\""), "\(error.reason)")
        #expect(!error.reason.contains("/nonexistent"), "the option alone decides: \(error.reason)")
    }
}
