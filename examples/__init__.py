"""Examples of using ndis on mechanisms that are not part of it."""
