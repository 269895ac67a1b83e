import Foundation
import Testing

@testable import OCRIngestPlugin

/// AAMVA text as scanners deliver it (issue 43): the strict reader falls back to the lenient one, and every
/// deviation it tolerates is a warning starting `lenient:`.
@Suite("AAMVA lenient reading")
struct AAMVALenientTests {
    @Test("Every control character stripped: elements found by their ids")
    func separatorsStripped() throws {
        let stripped = AAMVASample.v2.filter { !["\n", "\u{1E}", "\r"].contains($0) }
        #expect(throws: OCRIngestError.self) { _ = try AAMVAReader.read(bytes: Array(stripped.utf8), lenient: false) }
        let b = try AAMVAReader.read(stripped)
        #expect(b.licenseNumber == "D1234562" && b.familyName == "PUBLIC" && b.firstName == "JOHN")
        #expect(b.dateOfBirth?.description == "1980-07-04" && b.expiryDate?.description == "2028-07-04")
        #expect(b.postalCode == "95814" && b.sex == .male)
        #expect(b.warnings.contains { $0.hasPrefix("lenient:") && $0.contains("no element separators") })
        #expect(b.warnings.contains { $0.contains("0 separator byte(s)") })
    }

    /// `text` as a Windows program writes it: each LF (and, with `carriageReturnsToo`, each CR) as CR LF.
    static func windowsLineEndings(_ text: String, carriageReturnsToo: Bool) -> [UInt8] {
        Array(text.utf8).flatMap { $0 == 0x0A || (carriageReturnsToo && $0 == 0x0D) ? [0x0D, 0x0A] : [$0] }
    }

    @Test(
        "CR LF line endings (Windows): read by the strict and the lenient reader, offsets in the text as given",
        arguments: [false, true])
    func windowsLineEndings(carriageReturnsToo: Bool) throws {
        for sample in [AAMVASample.v10, AAMVASample.v2, AAMVASample.v1, AAMVASample.ontario, AAMVASample.idCard] {
            let expected = try AAMVAReader.read(bytes: Array(sample.utf8), lenient: false)
            let bytes = Self.windowsLineEndings(sample, carriageReturnsToo: carriageReturnsToo)
            for lenient in [false, true] {
                let b = try AAMVAReader.read(bytes: bytes, lenient: lenient)
                #expect(b.subfiles.map(\.elements.count) == expected.subfiles.map(\.elements.count))
                for (got, want) in zip(b.subfiles.flatMap(\.elements), expected.subfiles.flatMap(\.elements)) {
                    #expect(got.id == want.id && got.value == want.value)
                    // The offset points at the element's id in the CR LF text.
                    #expect(String(decoding: bytes[got.offset..<(got.offset + 3)], as: UTF8.self) == got.id)
                }
                #expect(b.dates == expected.dates && b.directory == expected.directory)
                #expect(b.warnings.first?.contains("CR LF line endings") == true)
                #expect(!b.warnings.contains { $0.hasPrefix("lenient:") })
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let document = try DocumentIngest.ingest(text: text, documentID: "dl", reference: testReference)
            #expect(document.kind == .aamva)
        }
        let b = try AAMVAReader.read(bytes: Self.windowsLineEndings(AAMVASample.v10, carriageReturnsToo: false))
        #expect(b.licenseNumber == "T64235789" && b.familyName == "SAMPLE" && b["DAI"] == "RICHMOND")
        #expect(b.subfiles.map(\.type) == ["DL", "ZV"] && b.subfiles[1]["ZVA"] == "01")
        // Truncated CR LF text is refused; the message says how its byte numbers count.
        let cut = Array(Self.windowsLineEndings(AAMVASample.v10, carriageReturnsToo: false).prefix(120))
        #expect {
            _ = try AAMVAReader.read(bytes: cut)
        } throws: { error in
            guard case .aamva(_, _, let message) = error as? OCRIngestError else { return false }
            return message.contains("truncated") && message.contains("CR of each CR LF removed")
        }
    }

    @Test("Element separators stripped but the header kept")
    func elementSeparatorsStripped() throws {
        let body = AAMVASample.v10.dropFirst(41).replacingOccurrences(of: "\n", with: "")
        let b = try AAMVAReader.read(String(AAMVASample.v10.prefix(41)) + body)
        #expect(b.licenseNumber == "T64235789" && b.familyName == "SAMPLE" && b.issuerJurisdiction == "VA")
        #expect(b.dateOfBirth?.description == "1986-06-06" && b["DAI"] == "RICHMOND" && b["DAJ"] == "VA")
        #expect(b["DCA"] == "D" && b["DCB"] == "K" && b.dates["DDC"]?.description == "2020-06-06")
    }

    @Test("A directory length that disagrees: checked, not trusted")
    func directoryLengths() throws {
        let noTerminator = String(AAMVASample.v2.dropLast())
        // Declared shorter than the payload: the payload reaches it, so the subfile is read to the end.
        let short = noTerminator.replacingOccurrences(of: "DL00310200", with: "DL00310150")
        let b = try AAMVAReader.read(short)
        #expect(b.licenseNumber == "D1234562" && b.dates["DBD"]?.description == "2020-07-04")
        #expect(b.warnings.contains { $0.contains("no segment terminator") })
        // Declared longer than the payload and no terminator: that is truncation, still refused.
        let long = noTerminator.replacingOccurrences(of: "DL00310200", with: "DL00310400")
        #expect { _ = try AAMVAReader.read(long) } throws: { "\($0)".contains("truncated") }
    }

    @Test("An element without an id is skipped with a warning, not the whole barcode refused")
    func junkElement() throws {
        let junk = AAMVASample.v2.replacingOccurrences(of: "DAYBLU\n", with: "DAYBLU\n1?x\n")
        #expect(throws: OCRIngestError.self) { _ = try AAMVAReader.read(bytes: Array(junk.utf8), lenient: false) }
        let b = try AAMVAReader.read(junk)
        #expect(b["DAY"] == "BLU" && b.licenseNumber == "D1234562")
        #expect(b.warnings.contains { $0.hasPrefix("lenient:") && $0.contains("skipped '1?x'") })
    }
}
