import Foundation
import SanadArchive
import Testing

/// Checksums against their standards' examples, and ZIP archives against the reader here, Python's `zipfile` and
/// `unzip -t` where they are installed, and against damage.
@Suite("checksums and ZIP archives")
struct ArchiveTests {
    @Test("SHA-256 matches the FIPS 180-4 examples")
    func sha() {
        #expect(sha256Hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(sha256Hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            sha256Hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test("HMAC-SHA-256 matches RFC 4231's test cases 1, 2 and 6 (a key longer than a block)")
    func hmac() {
        func hex(_ key: [UInt8], _ text: String) -> String {
            hexString(hmacSHA256(key: key, message: Array(text.utf8)))
        }
        #expect(
            hex([UInt8](repeating: 0x0b, count: 20), "Hi There")
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(
            hex(Array("Jefe".utf8), "what do ya want for nothing?")
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(
            hex(
                [UInt8](repeating: 0xaa, count: 131), "Test Using Larger Than Block-Size Key - Hash Key First")
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        #expect(digestsEqual([1, 2, 3], [1, 2, 3]) && !digestsEqual([1, 2, 3], [1, 2, 4]) && !digestsEqual([1], []))
    }

    @Test("CRC-32 matches zlib's check value, in any split")
    func crc() {
        #expect(CRC32.of(Array("123456789".utf8)) == 0xCBF4_3926)
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var c = CRC32()
        bytes[..<333].withUnsafeBytes { c.update($0) }
        bytes[333...].withUnsafeBytes { c.update($0) }
        #expect(c.checksum == CRC32.of(bytes))
    }

    static let entries = [
        ZipEntry(path: "manifest.json", bytes: Array("{\"a\": 1}\n".utf8)),
        ZipEntry(path: "documents/عربي.txt", bytes: Array("مرحبا\n".utf8)),
        ZipEntry(path: "empty", bytes: []),
        ZipEntry(path: "binary/b.bin", bytes: (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) }),
    ]

    @Test("an archive reads back as written")
    func roundTrip() throws {
        let bytes = try ZipArchive.write(Self.entries, modified: Date(timeIntervalSince1970: 1_764_000_000))
        #expect(try ZipArchive.read(bytes) == Self.entries)
    }

    @Test("Python's zipfile and unzip -t read it, with the same files (skipped where neither is installed)")
    func otherReaders() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("zip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent("a.zip")
        try Data(try ZipArchive.write(Self.entries, modified: Date())).write(to: file)
        for python in ["/usr/bin/python3", "/usr/local/bin/python3"]
        where FileManager.default.fileExists(atPath: python) {
            let script = """
                import hashlib, sys, zipfile
                z = zipfile.ZipFile(sys.argv[1])
                assert z.testzip() is None
                for i in z.infolist(): print(i.filename, hashlib.sha256(z.read(i)).hexdigest())
                """
            let r = try runChild(python, ["-c", script, file.path])
            let expected = Self.entries.map { "\($0.path) \(sha256Hex($0.bytes))" }.joined(separator: "\n") + "\n"
            #expect(r.status == 0 && r.out == expected, "\(r.out)")
            break
        }
        if FileManager.default.fileExists(atPath: "/usr/bin/unzip") {
            let r = try runChild("/usr/bin/unzip", ["-t", file.path])
            #expect(r.status == 0 && r.out.contains("No errors detected"), "\(r.out)")
        }
    }

    @Test("every truncation is refused; every byte flip is refused or leaves the files unchanged")
    func damage() throws {
        let bytes = try ZipArchive.write(Self.entries.filter { $0.path != "binary/b.bin" }, modified: Date())
        for n in 0..<bytes.count {
            #expect(throws: ZipError.self) { _ = try ZipArchive.read(Array(bytes.prefix(n))) }
        }
        let original = try ZipArchive.read(bytes)
        for i in bytes.indices {
            for bit in [0x01, 0x80] as [UInt8] {
                var b = bytes
                b[i] ^= bit
                if let read = try? ZipArchive.read(b) {
                    // Times, attributes and "made by" are not checked; names and contents are.
                    #expect(read == original, "flip at \(i)")
                }
            }
        }
    }

    @Test("names that leave the folder, duplicates and compressed entries are refused")
    func hostile() throws {
        for path in ["../evil", "/etc/passwd", "a/../../b", "a\\b", "", "a//b", "./a"] {
            #expect(throws: ZipError.self) {
                _ = try ZipArchive.write([ZipEntry(path: path, bytes: [])], modified: Date())
            }
        }
        // A duplicate name, written by splicing two archives' entries: rename "b" to "a" in place (same length).
        var dup = try ZipArchive.write(
            [ZipEntry(path: "a", bytes: [1]), ZipEntry(path: "b", bytes: [1])], modified: Date(timeIntervalSince1970: 0)
        )
        for i in dup.indices where dup[i] == UInt8(ascii: "b") && i > 0 && dup[i - 1] == 0 {
            dup[i] = UInt8(ascii: "a")
        }
        #expect { _ = try ZipArchive.read(dup) } throws: { "\($0)".contains("twice") }
        // Method 8 (deflate) in both headers.
        var deflated = try ZipArchive.write([ZipEntry(path: "a", bytes: [])], modified: Date())
        deflated[8] = 8
        let central = deflated.count - 22 - 47
        deflated[central + 10] = 8
        #expect { _ = try ZipArchive.read(deflated) } throws: { "\($0)".contains("stored entries only") }
    }

    func runChild(_ executable: String, _ arguments: [String]) throws -> (status: Int32, out: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
