import BLASBackend
import Foundation
import SanadCore
import SanadTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("BLAS engine: hostile library files")
struct BLASHostileLibraryTests {
    @Test("a FIFO named as the library is refused at once, never handed to dlopen")
    func fifo() throws {
        let path = try TestPaths.temporaryDirectory().appendingPathComponent("libfifo.so").path
        try #require(mkfifo(path, 0o600) == 0)
        guard case .unavailable(let reason) = BLASBackend(library: path).availability else {
            Issue.record("a FIFO was accepted as a BLAS library")
            return
        }
        #expect(reason.contains("libfifo.so") && reason.contains("not a regular file (a FIFO)"), "\(reason)")
    }

    #if os(Linux)
        @Test("an ELF library cut short is refused instead of killing the process in dlopen")
        func truncated() throws {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath())
            let path = try TestPaths.temporaryDirectory().appendingPathComponent("libcut.so")
            try bytes.prefix(8192).write(to: path)
            guard case .unavailable(let reason) = BLASBackend(library: path.path).availability else {
                Issue.record("a truncated library was accepted")
                return
            }
            #expect(reason.contains("libcut.so") && reason.contains("cut short"), "\(reason)")
        }
    #endif
}
