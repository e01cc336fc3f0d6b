package main

import (
	"errors"
	"os"
)

// config comes from the environment (see .env for local values).
type config struct {
	Addr     string
	Greeting string
	APIKey   string // checked against secrets/api.key in production
}

func loadConfig() (config, error) {
	c := config{
		Addr:     getenv("ADDR", ":8080"),
		Greeting: getenv("GREETING", "Hello"),
		APIKey:   os.Getenv("API_KEY"),
	}
	if c.APIKey == "" {
		return c, errors.New("API_KEY is not set; see .env for local values")
	}
	return c, nil
}

func getenv(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
