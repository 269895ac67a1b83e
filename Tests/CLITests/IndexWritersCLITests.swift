import Foundation
import SanadCore
import SanadTestSupport
import Synchronization
import Testing

/// Two `sanad index add` on one index at once (issue 43): before the lock, each rewrote the file from what it had
/// read and one's entries were lost (41 of 81 kept).
@Suite(
    "sanad index: concurrent writers",
    .enabled(if: SanadCLI.executable != nil && TestPaths.model("all-MiniLM-L6-v2") != nil))
struct IndexWritersCLITests {
    @Test("two concurrent 'index add' of 40 and 41 texts keep all 81 entries")
    func concurrentAdds() throws {
        let dir = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let index = dir.appendingPathComponent("shared.idx").path
        let inputs = [(1...40).map { "alpha text \($0)" }, (1...41).map { "beta text \($0)" }]
        let results = Mutex<[SanadCLI.Result?]>([nil, nil])
        DispatchQueue.concurrentPerform(iterations: 2) { i in
            let r = try? SanadCLI.run(
                ["index", "add", "--index", index, "-f", "-"], stdin: inputs[i].joined(separator: "\n") + "\n")
            results.withLock { $0[i] = r }
        }
        for r in results.withLock({ $0 }) { #expect(r?.status == 0, "\(r?.stderr ?? "did not run")") }
        let list = try SanadCLI.run(["index", "list", "--index", index])
        #expect(list.status == 0, "\(list.stderr)")
        let ids = Set(list.stdout.split(separator: "\n").map(String.init))
        #expect(ids.count == 81, "\(ids.count) entries kept")
    }
}
