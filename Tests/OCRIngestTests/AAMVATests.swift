import Foundation
import SanadCore
import SanadTestSupport
import Testing

@testable import OCRIngestPlugin

/// Payloads written from the AAMVA DL/ID card design standard's Annex D examples (the 2020 example is the first,
/// byte for byte); the others follow the same layout for older versions and other issuers. Offsets and lengths in
/// each directory were counted for these exact strings.
enum AAMVASample {
    static let v10 =
        "@\n\u{1E}\rANSI 636000100002DL00410278ZV03190008DLDAQT64235789\nDCSSAMPLE\nDDEN\nDACMICHAEL\nDDFN\nDADJOHN\n"
        + "DDGN\nDCUJR\nDCAD\nDCBK\nDCDPH\nDBD06062019\nDBB06061986\nDBA12102024\nDBC1\nDAU068 in\nDAYBRO\n"
        + "DAG2300 WEST BROAD STREET\nDAIRICHMOND\nDAJVA\nDAK232690000  \nDCF2424244747474786102204\nDCGUSA\n"
        + "DCK123456789\nDDAF\nDDB06062018\nDDC06062020\nDDD1\rZVZVA01\r"
    /// Version 2: given names in DCT.
    static let v2 =
        "@\n\u{1E}\rANSI 636014020001DL00310200DLDAQD1234562\nDCSPUBLIC\nDCTJOHN,QUINCY\nDBB07041980\n"
        + "DBA07042028\nDBD07042020\nDBC1\nDAU070 in\nDAYBLU\nDAG100 MAIN ST\nDAISACRAMENTO\nDAJCA\nDAK958140000\n"
        + "DCGUSA\nDCAC\nDCBNONE\nDCDNONE\nDCF00/00/0000NNNAN/ANFD/YY\r"
    /// Version 1 (DL/ID-2000): no jurisdiction version, DAA full name, CCYYMMDD dates, M/F sex.
    static let v1 =
        "@\n\u{1E}\rANSI 6360100101DL00290131DLDAQS123456789012\nDAAPUBLIC,JANE,Q\nDAG123 OCEAN DR\nDAIMIAMI\n"
        + "DAJFL\nDAK33139\nDBB19750315\nDBA20270315\nDBD20190315\nDBCF\nDAU507\nDAV170\r"
    /// Ontario (Canadian IIN, DCG CAN): CCYYMMDD dates, height in centimetres.
    static let ontario =
        "@\n\u{1E}\rANSI 636012080101DL00310209DLDCAG\nDCBX\nDCDNONE\nDBA20300214\nDCSTREMBLAY\nDACMARIE\n"
        + "DADCLAIRE\nDBD20250214\nDBB19880214\nDBC2\nDAYBRN\nDAU165 cm\nDAG45 KING ST W\nDAITORONTO\nDAJON\n"
        + "DAKM5H 1J9\nDAQT7654-32109-80214\nDCFAB1234567\nDCGCAN\nDDEN\nDDFN\nDDGN\r"
    /// A New York ID card (ID subfile, version 9).
    static let idCard =
        "@\n\u{1E}\rANSI 636001090301ID00310183IDDAQ123456789\nDCSRIVERA\nDACANA\nDADLUCIA\nDBA03012031\n"
        + "DBD03012023\nDBB11301995\nDBC2\nDAYHAZ\nDAU064 IN\nDAG1 CENTRE ST APT 5\nDAINEW YORK\nDAJNY\n"
        + "DAK100070000\nDCFX9Y8Z7\nDCGUSA\nDDEN\nDDFN\nDDGN\r"
}

@Suite("AAMVA barcode text")
struct AAMVATests {
    @Test("The 2020 standard's example: header, directory, every element")
    func v10() throws {
        let b = try AAMVAReader.read(AAMVASample.v10)
        #expect(b.header.iin == "636000" && b.header.version == 10 && b.header.jurisdictionVersion == 0)
        #expect(b.header.numberOfEntries == 2 && b.header.fileType == "ANSI ")
        #expect(b.header.dataElementSeparator == 0x0A && b.header.recordSeparator == 0x1E)
        #expect(b.header.segmentTerminator == 0x0D)
        #expect(
            b.directory == [
                AAMVASubfileEntry(type: "DL", offset: 41, length: 278),
                AAMVASubfileEntry(type: "ZV", offset: 319, length: 8),
            ])
        #expect(b.warnings.isEmpty)
        #expect(b.documentKind == "DL" && b.issuerJurisdiction == "VA" && b.country == .usa)
        #expect(b.licenseNumber == "T64235789")
        #expect(b.familyName == "SAMPLE" && b.firstName == "MICHAEL" && b.middleNames == "JOHN" && b.suffix == "JR")
        #expect(b.fullName == "MICHAEL JOHN SAMPLE JR")
        #expect(b.dateOfBirth?.description == "1986-06-06")
        #expect(b.expiryDate?.description == "2024-12-10")
        #expect(b.issueDate?.description == "2019-06-06")
        #expect(b.dates["DDC"]?.description == "2020-06-06")
        #expect(b.sex == .male)
        #expect(b.height == AAMVAHeight(value: 68, unit: .inches) && b.height?.centimetres == 173)
        #expect(b["DAY"] == "BRO" && b["DAG"] == "2300 WEST BROAD STREET" && b["DAI"] == "RICHMOND")
        #expect(b["DAJ"] == "VA" && b.postalCode == "23269")
        #expect(b["DCA"] == "D" && b["DCB"] == "K" && b["DCD"] == "PH")
        #expect(b["DCF"] == "2424244747474786102204" && b.truncatedNameParts.isEmpty)
        #expect(b.subfiles.last?.type == "ZV" && b.subfiles.last?["ZVA"] == "01")
        #expect(b.primary?.element("DAQ")?.offset == 43)
    }

    @Test("Version 2: given names from DCT")
    func v2() throws {
        let b = try AAMVAReader.read(AAMVASample.v2)
        #expect(b.header.version == 2)
        #expect(b.familyName == "PUBLIC" && b.firstName == "JOHN" && b.middleNames == "QUINCY")
        #expect(b.dateOfBirth?.description == "1980-07-04" && b.issuerJurisdiction == "CA")
        #expect(b.height?.value == 70)
        #expect(b.warnings.isEmpty)
    }

    @Test("Version 1: DAA full name, CCYYMMDD dates, M/F sex, no jurisdiction version")
    func v1() throws {
        let b = try AAMVAReader.read(AAMVASample.v1)
        #expect(b.header.version == 1 && b.header.jurisdictionVersion == nil)
        #expect(b.familyName == "PUBLIC" && b.firstName == "JANE" && b.middleNames == "Q")
        #expect(b.dateOfBirth?.description == "1975-03-15" && b.expiryDate?.description == "2027-03-15")
        #expect(b.sex == .female)
        #expect(b.height == AAMVAHeight(value: 170, unit: .centimetres))
        #expect(b.warnings.isEmpty)
    }

    @Test("Canadian issuer: CCYYMMDD dates, height in cm")
    func canada() throws {
        let b = try AAMVAReader.read(AAMVASample.ontario)
        #expect(b.country == .canada && b.issuerJurisdiction == "ON")
        #expect(b.dateOfBirth?.description == "1988-02-14" && b.expiryDate?.description == "2030-02-14")
        #expect(b.height == AAMVAHeight(value: 165, unit: .centimetres))
        #expect(b.postalCode == "M5H 1J9" && b.sex == .female)
        #expect(b.warnings.isEmpty)
    }

    @Test("ID card subfile; US dates; ZIP kept as five digits")
    func idCard() throws {
        let b = try AAMVAReader.read(AAMVASample.idCard)
        #expect(b.documentKind == "ID" && b.issuerJurisdiction == "NY")
        #expect(b.dateOfBirth?.description == "1995-11-30" && b.fullName == "ANA LUCIA RIVERA")
        #expect(b.height?.unit == .inches && b.postalCode == "10007")
        #expect(b.warnings.isEmpty)
    }

    @Test("A truncated payload names the element and offset where it ends")
    func truncated() throws {
        let cut = String(AAMVASample.v10.utf8.prefix(200))!
        #expect {
            _ = try AAMVAReader.read(cut)
        } throws: { error in
            guard case .aamva(let offset, let element, let message) = error as? OCRIngestError else { return false }
            return offset == 180 && element == "subfile DL, element 'DAG'" && message.contains("truncated")
        }
        // Cut inside the directory.
        let header = String(AAMVASample.v10.utf8.prefix(30))!
        #expect(
            throws: OCRIngestError.aamva(
                offset: 21, element: "subfile directory entry 1",
                message: "the payload ends at byte 30, inside the subfile directory (truncated)")
        ) {
            _ = try AAMVAReader.read(header)
        }
    }

    @Test("Malformed payloads get precise errors")
    func malformed() throws {
        #expect(
            throws: OCRIngestError.aamva(
                offset: 0, element: "compliance indicator",
                message: "expected '@' (0x40), found 'X'; this is not AAMVA barcode text")
        ) {
            _ = try AAMVAReader.read("X" + AAMVASample.v10.dropFirst())
        }
        let badIIN = AAMVASample.v10.replacingOccurrences(of: "ANSI 636000", with: "ANSI 63A000")
        #expect(throws: OCRIngestError.aamva(offset: 9, element: "IIN", message: "expected 6 digits, found '63A000'")) {
            _ = try AAMVAReader.read(badIIN)
        }
        // DBB 13/40/1986 in a US card's MMDDCCYY order.
        let badDate = AAMVASample.v10.replacingOccurrences(of: "DBB06061986", with: "DBB13401986")
        #expect {
            _ = try AAMVAReader.read(badDate)
        } throws: { error in
            guard case .aamva(_, let element, let message) = error as? OCRIngestError else { return false }
            return element == "DBB" && message.contains("MMDDCCYY")
        }
        let badElement = AAMVASample.v10.replacingOccurrences(of: "\nDCSSAMPLE", with: "\nD\n")
        // The lenient fallback skips it with a warning; the strict reader names it.
        #expect(try AAMVAReader.read(badElement).warnings.contains { $0.contains("skipped 'D'") })
        #expect {
            _ = try AAMVAReader.read(bytes: Array(badElement.utf8), lenient: false)
        } throws: { error in
            guard case .aamva(let offset, _, let message) = error as? OCRIngestError else { return false }
            return offset == 56 && message.contains("after element DAQ")
        }
    }

    @Test("Stripped control characters and a moved subfile are tolerated with warnings")
    func tolerated() throws {
        let stripped = AAMVASample.v10.replacingOccurrences(of: "@\n\u{1E}\r", with: "@\n\r")
        let b = try AAMVAReader.read(stripped)
        #expect(b.licenseNumber == "T64235789")
        #expect(b.warnings.contains { $0.contains("2 separator byte(s)") })
        let missing = AAMVASample.v10.replacingOccurrences(of: "DAYBRO\n", with: "")
        let m = try AAMVAReader.read(missing)
        #expect(m.warnings.contains { $0.contains("lacks mandatory element(s) DAY") })
        #expect(m.warnings.contains { $0.contains("is 271 bytes long, the directory declares 278") })
    }
}

@Suite("AAMVA robustness")
struct AAMVARobustnessTests {
    @Test("Every truncation of every sample throws a located error, never crashes")
    func everyPrefix() throws {
        for sample in [AAMVASample.v10, AAMVASample.v2, AAMVASample.v1, AAMVASample.ontario, AAMVASample.idCard] {
            let bytes = Array(sample.utf8)
            for length in 0..<(bytes.count - 1) {
                #expect(throws: OCRIngestError.self, "prefix of \(length) bytes") {
                    _ = try AAMVAReader.read(bytes: Array(bytes.prefix(length)))
                }
            }
            // Only the final segment terminator missing: the payload reaches the directory's end; read leniently.
            let unterminated = try AAMVAReader.read(bytes: Array(bytes.dropLast()))
            #expect(unterminated.warnings.contains { $0.hasPrefix("lenient:") && $0.contains("no segment terminator") })
            #expect((try? AAMVAReader.read(bytes: bytes)) != nil)
        }
    }

    @Test("Random byte corruptions either parse or throw an AAMVA error")
    func corruptions() {
        var rng = SeededGenerator(seed: 42)
        let bytes = Array(AAMVASample.v10.utf8)
        for _ in 0..<2000 {
            var mutated = bytes
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let i = Int.random(in: 0..<mutated.count, using: &rng)
                mutated[i] = UInt8.random(in: 0...127, using: &rng)
            }
            do {
                _ = try AAMVAReader.read(bytes: mutated)
            } catch let error as OCRIngestError {
                guard case .aamva = error else {
                    Issue.record("unexpected error \(error)")
                    continue
                }
            } catch {
                Issue.record("unexpected error type \(error)")
            }
        }
    }
}
