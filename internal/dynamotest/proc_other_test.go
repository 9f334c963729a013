//go:build !unix

package dynamotest

func processGroupExists(int) bool { return false }
