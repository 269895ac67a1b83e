import Foundation
import SanadIndex
import Testing

/// Concurrent writers (issue 43): every write of an index file takes its lock, so none drops another's entries.
@Suite("Concurrent index writers")
struct IndexWriterTests {
    @Test("Four writers adding 20 entries each, one save per entry, keep all 80")
    func concurrentAdds() async throws {
        let path = try temporaryFile("shared.idx")
        let writers = 4
        let perWriter = 20
        await withTaskGroup(of: Void.self) { group in
            for w in 0..<writers {
                group.addTask {
                    var vectors = Vectors(state: UInt64(w + 1))
                    for n in 0..<perWriter {
                        let vector = vectors.next(8)
                        _ = try? VectorIndexFile.update(path, dimension: 8) { index in
                            try index.add(VectorIndexEntry(id: "w\(w)-\(n)", text: "text \(n)"), vector: vector)
                        }
                    }
                }
            }
        }
        let index = try VectorIndexFile.load(path)
        #expect(index.count == writers * perWriter)
        let ids = Set(index.entries.map(\.id))
        #expect(ids.count == writers * perWriter && ids.contains("w3-19") && ids.contains("w0-0"))
    }

    @Test("A writer waits while another holds the lock, then sees what it saved")
    func waitsForTheLock() throws {
        let path = try temporaryFile("held.idx")
        let holding = DispatchSemaphore(value: 0)
        let first = Thread {
            _ = try? VectorIndexFile.update(path, dimension: 4) { index in
                holding.signal()
                Thread.sleep(forTimeInterval: 0.3)
                try index.add(VectorIndexEntry(id: "first", text: "a"), vector: [1, 0, 0, 0])
            }
        }
        first.start()
        holding.wait()
        let count = try VectorIndexFile.update(path, dimension: 4) { index in
            try index.add(VectorIndexEntry(id: "second", text: "b"), vector: [0, 1, 0, 0])
            return index.count
        }
        #expect(count == 2, "the second writer read the first one's save")
    }

    @Test("Removing from a missing index is an error naming the file; the lock file is beside the index")
    func missing() throws {
        let path = try temporaryFile("none.idx")
        #expect { _ = try VectorIndexFile.update(path) { $0.remove("x") } } throws: { "\($0)".contains(path) }
        #expect(FileManager.default.fileExists(atPath: path + ".lock"))
    }
}
