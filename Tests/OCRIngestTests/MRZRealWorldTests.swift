import Foundation
import Testing

@testable import OCRIngestPlugin

/// What scanners produce around real zones (issue 43): headings and OCR specks next to the zone, and the long
/// document numbers of TD1 and TD2 documents.
@Suite("MRZ as scanned")
struct MRZRealWorldTests {
    static let td1 = Specimen.td1.joined(separator: "\n")
    static let td3 = Specimen.td3.joined(separator: "\n")

    @Test(
        "A short heading directly above or below the zone does not change its layout",
        arguments: [
            "PASSPORT\n\(td3)", "PASSPORT\nUTOPIA\n\(td3)", "\(td3)\nPASSPORT", "PASSEPORT PASSPORT\n\(td3)\nUTO",
            "IDENTITY CARD\n\(td1)", "\(td1)\nSPECIMEN",
        ])
    func headings(text: String) throws {
        let r = try MRZReader.read(text, reference: testReference)
        #expect(r.isValid, "\(r.problems) \(r.failedChecks)")
        #expect(r.surname == "ERIKSSON" && r.givenNames == ["ANNA", "MARIA"])
        #expect(r.documentNumber == (r.format == .td3 ? "L898902C3" : "D23145890"))
    }

    @Test("OCR specks between the zone's lines do not split it")
    func specks() throws {
        let text = "REPUBLIC OF UTOPIA\n" + Specimen.td3[0] + "\n . ,\n" + Specimen.td3[1] + "\n~\n"
        let r = try MRZReader.read(text, reference: testReference)
        #expect(r.isValid && r.format == .td3 && r.documentNumber == "L898902C3")
        #expect(
            MRZReader.isNoise(" . , ") && MRZReader.isNoise("") && !MRZReader.isNoise("P<") && !MRZReader.isNoise("a"))
    }

    /// Built on the Belgian specimen's long document number (`000590240` `<` `601`, check digit 3, which Doc 9303
    /// computes over the nine characters, the `<` and the continuation); the other fields are filled in here.
    static let belgian = [
        "IDBEL000590240<6013<<<<<<<<<<<",
        "8501019F3001019BEL850101001237",
        "SPECIMEN<<SPECIMEN<<<<<<<<<<<<",
    ]

    @Test("TD1 long document number (Belgian specimen): the full number, its check passing")
    func belgianLongNumber() throws {
        let r = try MRZReader.read(lines: Self.belgian, reference: testReference)
        #expect(r.isValid, "\(r.failedChecks) \(r.problems)")
        #expect(r.documentNumber == "000590240601")
        #expect(r.checks.first { $0.id == .documentNumber }?.passed == true)
        #expect(r.issuingState == "BEL" && r.optionalData1 == "" && r.optionalData2 == "85010100123")
        var damaged = Self.belgian
        damaged[0] = "IDBEL000590240<6014<<<<<<<<<<<"
        let d = try MRZReader.read(lines: damaged, reference: testReference)
        #expect(!d.isValid && d.failedChecks.contains(.documentNumber))
    }

    @Test("TD2 long document number: carried into the optional data, checked with the '<'")
    func td2LongNumber() throws {
        let r = try MRZReader.read(
            lines: [Specimen.td2[0], "D23145890<UTO7408122F120415973412<<2"], reference: testReference)
        #expect(r.format == .td2 && r.isValid, "\(r.failedChecks) \(r.problems)")
        #expect(r.documentNumber == "D231458907341")
    }
}
