import Foundation
import SanadTestSupport
import Testing

@testable import OCRIngestPlugin

/// Tesseract through `dlopen`, end to end on a rendered passport MRZ. Skips (with the reason printed) where the
/// library, the English trained data, ImageMagick or the DejaVu Sans Mono font is missing.
@Suite("Tesseract OCR")
struct TesseractOCRTests {
    @Test("A rendered TD3 passport MRZ reads back through Tesseract and passes every check")
    func renderedPassport() throws {
        let ocr: TesseractOCR
        do { ocr = try TesseractOCR() } catch {
            print("skipped: \(error)")
            return
        }
        guard let convert = ImageTools.imageMagick() else {
            print(
                "skipped: ImageMagick convert or \(ImageTools.font) missing (apt-get install imagemagick fonts-dejavu-core)"
            )
            return
        }
        let png = FileManager.default.temporaryDirectory.appendingPathComponent("sanad-mrz-\(UUID()).png").path
        defer { try? FileManager.default.removeItem(atPath: png) }
        try ImageTools.renderLines(Specimen.td3, to: png, convert: convert)
        let text: String
        do { text = try ocr.recognize(imageAt: png, language: "eng", pageSegmentation: .singleBlock) } catch {
            if case OCRIngestError.ocrUnavailable = error {
                print("skipped: \(error)")
                return
            }
            throw error
        }
        let result = try MRZReader.read(text, reference: testReference)
        #expect(result.isValid, "OCR text: \(text)")
        #expect(result.documentNumber == "L898902C3")
        #expect(result.surname == "ERIKSSON" && result.givenNames == ["ANNA", "MARIA"])
        #expect(result.dateOfBirth.iso == "1974-08-12")
    }

    @Test("A missing library names the variable's file and the install command")
    func missingLibrary() {
        #expect {
            _ = try TesseractOCR(environment: ["SANAD_TESSERACT": "/nonexistent/libtesseract.so.5"])
        } throws: { error in
            let text = "\(error)"
            return text.contains("/nonexistent/libtesseract.so.5") && text.contains("apt-get install tesseract-ocr")
                && text.contains("Text input still works")
        }
    }

    @Test("An unreadable image is a clear error, not a crash")
    func unreadableImage() throws {
        let ocr: TesseractOCR
        do { ocr = try TesseractOCR() } catch {
            print("skipped: \(error)")
            return
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sanad-notimage-\(UUID()).png").path
        try Data("not an image".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: OCRIngestError.self) { _ = try ocr.recognize(imageAt: path, language: "eng") }
    }
}
