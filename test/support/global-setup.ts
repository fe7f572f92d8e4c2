// Replaced by the database template setup; kept minimal so pure unit tests run alone.
export default function setup(): void {}
