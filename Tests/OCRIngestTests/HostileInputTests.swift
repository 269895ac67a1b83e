import Foundation
import Testing

@testable import OCRIngestPlugin

/// Inputs built to crash or stall the readers (issue 43): each must end in a result or a clear error, never a
/// trap, and in time linear in its size (the plugin README has the measured numbers; no timing is asserted here).
@Suite("Hostile documents")
struct HostileInputTests {
    @Test("A directory offset before the payload's start is an error, not a negative slice")
    func aamvaNegativeOffset() {
        // No separators after '@': offsets shift by -3, so the DL subfile's offset 0 points before byte 0.
        let payload = "@ANSI 636014040001DL00000100XXXXXXXXXX"
        #expect(throws: OCRIngestError.self) { _ = try AAMVAReader.read(payload) }
        #expect(throws: OCRIngestError.self) {
            _ = try DocumentIngest.ingest(text: payload, documentID: "x", reference: testReference)
        }
    }

    @Test("Every prefix of a barcode text, and every directory offset, reads or fails cleanly")
    func aamvaTruncationsAndOffsets() throws {
        let bytes = Array(AAMVASample.v10.utf8)
        for end in 0..<bytes.count {
            _ = try? AAMVAReader.read(bytes: Array(bytes[..<end]))
        }
        let header = "@\n\u{1E}\rANSI 636000100001DL"
        for offset in [0, 1, 5, 20, 9999] {
            for length in [0, 3, 9999] {
                let directory = String(format: "%04d%04d", offset, length)
                _ = try? AAMVAReader.read(header + directory + "DLDAQ1\r")
                _ = try? AAMVAReader.read("@ANSI 636000100001DL" + directory + "DL")
            }
        }
        #expect(AAMVAReader.describeRange(bytes, -3, 2).contains("before the start"))
        #expect(AAMVAReader.describeRange(bytes, bytes.count + 5, 2) == "the end of the payload")
    }

    @Test("Megabytes of MRZ-like lines are read within the window caps")
    func mrzFlood() throws {
        let zone = Specimen.td3.joined(separator: "\n") + "\n"
        let text = String(repeating: zone, count: (8 << 20) / zone.utf8.count)
        let r = try MRZReader.read(text, reference: testReference)
        #expect(r.isValid && r.documentNumber == "L898902C3")
        #expect(r.notes.contains { $0.contains("more MRZ-like windows than are read") })
    }

    @Test("Many separate blocks of damaged zones stay within the decode cap and fail with a short message")
    func mrzManyBlocks() {
        var damaged = Specimen.td3
        damaged[1] = "L898902C37UTO7408123F1204150ZE184226B<<<<<19"
        let block = damaged.joined(separator: "\n") + "\nsome words here\n"
        let text = String(repeating: block, count: 20_000)
        do {
            let r = try MRZReader.read(text, reference: testReference)
            #expect(!r.isValid)
        } catch let OCRIngestError.mrzLayout(why) {
            #expect(why.utf8.count < 600)
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test("Long text is chunked section by section: every byte covered, in order, with progress")
    func longTextChunks() throws {
        let paragraph = "The amount due this month is 45.00 SAR for electric service at the account. " + "\n"
        let text = String(repeating: paragraph + (Int.random(in: 0..<4) == 0 ? "\n" : ""), count: 40_000)
        var reports: [(Int, Int)] = []
        let chunks = try OCRText.chunks(of: text, documentID: "bill") { reports.append(($0, $1)) }
        let total = text.utf8.count
        #expect(total > 2 * OCRText.sectionBytes)
        #expect(reports.count >= 3 && reports.last?.0 == total && reports.last?.1 == total)
        #expect(chunks.first?.sourceRange.lowerBound == 0)
        let bytes = Array(text.utf8)
        func blank(_ range: Range<Int>) -> Bool { range.isEmpty || bytes[range].allSatisfy { $0 == 10 || $0 == 32 } }
        #expect(blank((chunks.last?.sourceRange.upperBound ?? 0)..<total))
        for (i, c) in chunks.enumerated() {
            #expect(c.index == i && c.text.count <= 800)
            if i > 0 {
                // Each chunk starts after the previous one started; what lies between them is only white space.
                let previous = chunks[i - 1].sourceRange
                #expect(c.sourceRange.lowerBound > previous.lowerBound)
                #expect(blank(previous.upperBound..<max(previous.upperBound, c.sourceRange.lowerBound)))
            }
        }
    }

    @Test("A section ends at a paragraph break, else a line break, else a space, else a character boundary")
    func sectionEnds() {
        let size = OCRText.sectionBytes
        var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: size * 2)
        #expect(bytes[OCRText.sectionEnd(bytes, from: 0) - 1] == UInt8(ascii: "a"))
        bytes[size - 10] = UInt8(ascii: " ")
        #expect(OCRText.sectionEnd(bytes, from: 0) == size - 9)
        bytes[size - 100] = UInt8(ascii: "\n")
        #expect(OCRText.sectionEnd(bytes, from: 0) == size - 99)
        bytes[size - 200] = UInt8(ascii: "\n")
        bytes[size - 201] = UInt8(ascii: "\n")
        #expect(OCRText.sectionEnd(bytes, from: 0) == size - 199)
        let arabic = Array(String(repeating: "ب", count: size).utf8)
        let end = OCRText.sectionEnd(arabic, from: 0)
        #expect(arabic[end] & 0xC0 != 0x80)
    }

    @Test("Standard input is read up to the same limit as files")
    func boundedRead() throws {
        let pipe = Pipe()
        let bytes = Data(repeating: 0x41, count: 300_000)
        let writer = Thread {
            pipe.fileHandleForWriting.write(bytes)
            try? pipe.fileHandleForWriting.close()
        }
        writer.start()
        #expect(try DocumentText.read(pipe.fileHandleForReading, limit: 100_000) == nil)
        let small = Pipe()
        small.fileHandleForWriting.write(Data("hello".utf8))
        try small.fileHandleForWriting.close()
        #expect(try DocumentText.read(small.fileHandleForReading, limit: 5) == Data("hello".utf8))
        #expect(DocumentText.tooLarge("standard input", bytes: nil).contains("64 MiB"))
    }
}
