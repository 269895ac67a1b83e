import Foundation

/// In-place softmax of `count` values (max subtracted first; sum in double). Returns the sum of the
/// exponentials before normalization.
@discardableResult
@inlinable
public func softmax(_ x: UnsafeMutablePointer<Float>, count: Int) -> Double {
    guard count > 0 else { return 0 }
    var maxValue = -Float.infinity
    for i in 0..<count { maxValue = max(maxValue, x[i]) }
    var sum: Double = 0
    for i in 0..<count {
        let e = expf(x[i] - maxValue)
        x[i] = e
        sum += Double(e)
    }
    let inverse = Float(1 / sum)
    for i in 0..<count { x[i] *= inverse }
    return sum
}
