//go:build race

package main

// raceBuild makes the tested binary a race-enabled build too, which also
// reuses the packages the test binary was compiled with.
const raceBuild = true
