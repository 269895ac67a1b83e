import Foundation
import Testing

@testable import OCRIngestPlugin

@Suite("Plain OCR text")
struct OCRTextTests {
    static let bill = """
        CITY  WATER\u{00A0}&\u{00A0}POWER
        Account 4417-2209
        Dear customer, your water consumption this period has increased sub-
        stantially compared with the same period last year, and we recommend a re-
        view of your household fixtures.

        Amount due:   45.00 SAR\t
        Due date: 2026-12-01
        \u{FB01}nal notice
        """

    @Test("Cleaning: spaces, hyphenated line breaks, wrapped prose, short lines, ligatures")
    func clean() {
        let c = OCRText.clean(Self.bill)
        #expect(
            c.text == """
                CITY WATER & POWER
                Account 4417-2209
                Dear customer, your water consumption this period has increased substantially compared with the \
                same period last year, and we recommend a review of your household fixtures.

                Amount due: 45.00 SAR
                Due date: 2026-12-01
                final notice
                """)
        #expect(c.sources.count == c.text.count)
        // Every cleaned character points back at the original bytes it came from.
        let original = Array(Self.bill.utf8)
        for (ch, span) in zip(c.text, c.sources) where ch.isLetter && ch.isASCII && span.count == 1 {
            #expect(Character(Unicode.Scalar(original[span.lowerBound])) == ch)
        }
    }

    @Test("Arabic text keeps its words; no hyphen joining without case")
    func arabic() {
        let c = OCRText.clean("فاتورة   الكهرباء\nالمبلغ المستحق: ٤٥ ريال")
        #expect(c.text == "فاتورة الكهرباء\nالمبلغ المستحق: ٤٥ ريال")
    }

    @Test("Chunks cover the text, overlap, respect the limit and map back to the source", arguments: [40, 64, 200])
    func chunks(size: Int) throws {
        let text = String(repeating: Self.bill + "\n\n", count: 4)
        let c = OCRText.clean(text)
        let chunks = try OCRText.chunk(c, documentID: "bill-1", maxCharacters: size, overlap: size / 4)
        #expect(chunks.count > 1)
        let cleaned = Array(c.text)
        var covered = [Bool](repeating: false, count: cleaned.count)
        for (i, chunk) in chunks.enumerated() {
            #expect(chunk.index == i && chunk.documentID == "bill-1")
            #expect(chunk.text.count <= size && !chunk.text.isEmpty)
            #expect(String(cleaned[chunk.cleanedRange]) == chunk.text)
            #expect(chunk.sourceRange.lowerBound < chunk.sourceRange.upperBound)
            #expect(chunk.sourceRange.upperBound <= text.utf8.count)
            for j in chunk.cleanedRange { covered[j] = true }
            if i > 0 {
                #expect(chunk.cleanedRange.lowerBound > chunks[i - 1].cleanedRange.lowerBound)
                #expect(chunk.cleanedRange.lowerBound <= chunks[i - 1].cleanedRange.upperBound)
            }
        }
        // Every non-space character lands in some chunk.
        for (j, ch) in cleaned.enumerated() where !ch.isWhitespace { #expect(covered[j]) }
        // The first chunk's source range starts at the text's first word.
        #expect(chunks.first?.sourceRange.lowerBound == 0)
    }

    @Test("Bad chunking options are refused")
    func badOptions() {
        let c = OCRText.clean("hello world")
        #expect(throws: OCRIngestError.self) { _ = try OCRText.chunk(c, documentID: "x", maxCharacters: 8) }
        #expect(throws: OCRIngestError.self) {
            _ = try OCRText.chunk(c, documentID: "x", maxCharacters: 100, overlap: 60)
        }
        #expect((try? OCRText.chunk(OCRText.clean("   \n\n "), documentID: "x"))?.isEmpty == true)
    }
}

@Suite("Field mapping")
struct FieldMappingTests {
    @Test("MRZ → DS-160 fields with evidence and repairs")
    func ds160() throws {
        var lines = Specimen.td3
        lines[1] = lines[1].replacingOccurrences(of: "7408122", with: "74O8122")
        let mrz = try MRZReader.read(lines: lines, reference: testReference)
        let proposals = try FieldProposer.proposals(from: mrz, documentID: "passport-scan-1")
        let byField = Dictionary(uniqueKeysWithValues: proposals.map { ($0.fieldID, $0) })
        #expect(byField["surname"]?.value == "ERIKSSON" && byField["givenNames"]?.value == "ANNA MARIA")
        #expect(byField["sex"]?.value == "female" && byField["dateOfBirth"]?.value == "1974-08-12")
        #expect(byField["nationality"]?.value == "UTO" && byField["passportNumber"]?.value == "L898902C3")
        #expect(byField["passportIssuingCountry"]?.value == "UTO" && byField["passportExpiry"]?.value == "2012-04-15")
        #expect(proposals.count == FieldMappings.mrzToDS160.count)
        let dob = try #require(byField["dateOfBirth"])
        #expect(dob.evidence.documentID == "passport-scan-1" && dob.evidence.documentKind == "MRZ TD3")
        #expect(dob.evidence.sourceField.contains("dateOfBirth (line 2, columns 14–19)"))
        #expect(dob.evidence.repairs.count == 1 && dob.evidence.repairs[0].contains("'O' → '0'"))
        #expect(byField["surname"]?.evidence.repairs.isEmpty == true)
        #expect(byField["nationality"]?.evidence.notes.first?.contains("Utopia") == true)
    }

    @Test("ICAO's D for Germany is proposed as ISO DEU, with the printed code in a note")
    func germany() throws {
        let mrz = try MRZReader.read(lines: Specimen.germanPassport, reference: testReference)
        let proposals = try FieldProposer.proposals(from: mrz, documentID: "de")
        let nationality = try #require(proposals.first { $0.fieldID == "nationality" })
        #expect(nationality.value == "DEU" && nationality.evidence.notes.first?.hasPrefix("D: Germany") == true)
        #expect(proposals.first { $0.fieldID == "passportNumber" }?.value == "C01X00T47")
    }

    @Test("An invalid MRZ proposes nothing and names the failing check")
    func refused() throws {
        var lines = Specimen.td3
        lines[1] = lines[1].replacingOccurrences(of: "7408122", with: "7408123")
        let mrz = try MRZReader.read(lines: lines, reference: testReference)
        #expect {
            _ = try FieldProposer.proposals(from: mrz, documentID: "p")
        } throws: { error in
            guard case .notVerified(let why) = error as? OCRIngestError else { return false }
            return why.contains("dateOfBirth")
        }
    }

    @Test("AAMVA → DMV renewal fields with element offsets")
    func dmv() throws {
        let b = try AAMVAReader.read(AAMVASample.v10)
        let proposals = FieldProposer.proposals(from: b, documentID: "licence-1")
        let byField = Dictionary(uniqueKeysWithValues: proposals.map { ($0.fieldID, $0) })
        #expect(byField["fullName"]?.value == "MICHAEL JOHN SAMPLE JR")
        #expect(byField["dob"]?.value == "1986-06-06" && byField["licenseNumber"]?.value == "T64235789")
        #expect(byField["state"]?.value == "VA" && byField["addressStreet"]?.value == "2300 WEST BROAD STREET")
        #expect(byField["addressCity"]?.value == "RICHMOND" && byField["addressPostalCode"]?.value == "23269")
        #expect(byField["heightInches"]?.value == "68" && byField["sex"]?.value == "male")
        #expect(byField["licenseExpiry"]?.value == "2024-12-10" && byField["addressLine2"] == nil)
        #expect(byField["licenseNumber"]?.evidence.sourceField == "DAQ (Customer ID number): DAQ at byte 43")
        #expect(byField["dob"]?.evidence.documentKind == "AAMVA DL v10")
        let canadian = FieldProposer.proposals(from: try AAMVAReader.read(AAMVASample.ontario), documentID: "on")
        #expect(canadian.first { $0.fieldID == "heightInches" }?.value == "65")
        #expect(canadian.first { $0.fieldID == "state" }?.value == "ON")
    }
}
