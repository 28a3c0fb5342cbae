package approval

// shaHex is exported to the external tests.
var ShaHexForTest = sha256Hex
