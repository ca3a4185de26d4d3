// Package matrix holds one test: every feature of the retry pipeline at
// every entry point of the library (see matrix_test.go). It is a module of
// its own so that one table can reach every entry point, gRPC and SQL
// included, without any library module depending on another for its tests.
package matrix
